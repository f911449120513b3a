package org.sojourn.yarn;

import java.util.Collection;
import java.util.Locale;

/**
 * What a job tells the scheduler through its application tags, since YARN's
 * asks carry neither a deadline nor a task duration:
 *
 * <pre>
 *   sojourn.deadline=DURATION       finish within DURATION of submission: 1500ms, 90s, 15m, 2h
 *   sojourn.value=NUMBER            what meeting it is worth (a positive number)
 *   sojourn.task-duration=DURATION  how long each of its tasks (not its AM) runs, about
 * </pre>
 *
 * <p>MapReduce users set them with
 * {@code -Dmapreduce.job.tags=sojourn.deadline=90s,sojourn.task-duration=20s}, other
 * clients with {@code ApplicationSubmissionContext.setApplicationTags}. YARN keeps tags
 * in lower case, so keys and units are matched in lower case.
 *
 * <p>Who reads what. The deadline and value are TetriSched's SLO (issue 16,
 * tetrisched.md §4): under tetrisched a job with a deadline is an SLO job whatever its
 * queue, and its value replaces the class's constant. The task duration becomes every
 * task ask's {@code est_task_ms}: eagle, hawk and pigeon classify a job short or long by
 * it (their cutoff), tetrisched plans with it instead of {@code default_runtime_ms},
 * hfsp takes it as its initial size with {@code use_ask_estimates}. Other policies
 * ignore the tags.
 *
 * <p>Why tags, not YARN's ReservationSystem (Rayon), which the TetriSched paper used:
 * Rayon lives inside the Capacity and Fair schedulers (their plan queues), which a
 * scheduler of its own cannot host, and a reservation needs a client that asks for one
 * first. A tag goes with any submission, through any client, and survives an RM restart
 * in the state store with the rest of the submission.
 */
final class AppTags {
  static final String DEADLINE = "sojourn.deadline=";
  static final String VALUE = "sojourn.value=";
  static final String TASK_DURATION = "sojourn.task-duration=";

  /** Milliseconds after submission, or null. */
  final Long deadlineAfterSubmitMs;
  /** The value of meeting the deadline, or null. */
  final Double value;
  /** Each task's estimated run time (ms), or null. */
  final Long taskMs;

  private AppTags(Long deadlineAfterSubmitMs, Double value, Long taskMs) {
    this.deadlineAfterSubmitMs = deadlineAfterSubmitMs;
    this.value = value;
    this.taskMs = taskMs;
  }

  static final AppTags NONE = new AppTags(null, null, null);

  /**
   * Reads the tags; others are left alone.
   *
   * @throws IllegalArgumentException a tag of ours that does not parse, or given twice,
   *     with a message naming it
   */
  static AppTags parse(Collection<String> tags) {
    if (tags == null || tags.isEmpty()) {
      return NONE;
    }
    Long deadline = null;
    Double value = null;
    Long taskMs = null;
    for (String raw : tags) {
      String tag = raw.trim().toLowerCase(Locale.ROOT);
      if (tag.startsWith(DEADLINE)) {
        if (deadline != null) {
          throw new IllegalArgumentException("application tag '" + raw + "': sojourn.deadline is given twice");
        }
        deadline = duration(raw, tag.substring(DEADLINE.length()));
      } else if (tag.startsWith(VALUE)) {
        if (value != null) {
          throw new IllegalArgumentException("application tag '" + raw + "': sojourn.value is given twice");
        }
        value = positive(raw, tag.substring(VALUE.length()));
      } else if (tag.startsWith(TASK_DURATION)) {
        if (taskMs != null) {
          throw new IllegalArgumentException("application tag '" + raw + "': sojourn.task-duration is given twice");
        }
        taskMs = duration(raw, tag.substring(TASK_DURATION.length()));
      }
    }
    return deadline == null && value == null && taskMs == null ? NONE : new AppTags(deadline, value, taskMs);
  }

  /** Milliseconds, from digits and a unit: ms, s, m or h. */
  private static long duration(String tag, String text) {
    String[][] units = {{"ms", "1"}, {"s", "1000"}, {"m", "60000"}, {"h", "3600000"}};
    for (String[] u : units) {
      if (text.endsWith(u[0])) {
        String digits = text.substring(0, text.length() - u[0].length());
        if (!digits.isEmpty() && digits.chars().allMatch(Character::isDigit) && digits.length() <= 12) {
          long ms = Long.parseLong(digits) * Long.parseLong(u[1]);
          if (ms > 0) {
            return ms;
          }
          throw new IllegalArgumentException("application tag '" + tag + "': the duration must be more than 0");
        }
      }
    }
    throw new IllegalArgumentException("application tag '" + tag
        + "': the duration must be a whole number with a unit, ms, s, m or h (e.g. 90s)");
  }

  private static double positive(String tag, String text) {
    double v;
    try {
      v = Double.parseDouble(text);
    } catch (NumberFormatException e) {
      v = Double.NaN;
    }
    if (!(v > 0) || Double.isInfinite(v)) {
      throw new IllegalArgumentException("application tag '" + tag + "': the value must be a positive number");
    }
    return v;
  }

  /**
   * The deadline in the core's clock ({@code coreNowMs}, ms since the scheduler
   * started), from the submission's wall-clock time; a deadline already past is now.
   */
  Long deadlineInCoreTime(long submitEpochMs, long nowEpochMs, long coreNowMs) {
    if (deadlineAfterSubmitMs == null) {
      return null;
    }
    long left = submitEpochMs + deadlineAfterSubmitMs - nowEpochMs;
    return coreNowMs + Math.max(0, left);
  }
}
