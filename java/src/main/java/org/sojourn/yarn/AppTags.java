package org.sojourn.yarn;

import java.util.Collection;
import java.util.Locale;

/**
 * A job's service-level objective, read from its application tags (issue 16,
 * tetrisched.md §4): the submitter states it, since YARN's asks carry no
 * deadline.
 *
 * <pre>
 *   sojourn.deadline=DURATION   finish within DURATION of submission: 1500ms, 90s, 15m, 2h
 *   sojourn.value=NUMBER        what meeting it is worth (a positive number)
 * </pre>
 *
 * <p>MapReduce users set them with {@code -Dmapreduce.job.tags=sojourn.deadline=90s},
 * other clients with {@code ApplicationSubmissionContext.setApplicationTags}. YARN
 * keeps tags in lower case, so both keys and units are matched in lower case.
 *
 * <p>Why tags, not YARN's ReservationSystem (Rayon), which the paper used: Rayon
 * lives inside the Capacity and Fair schedulers (their plan queues), which a
 * scheduler of its own cannot host, and a reservation needs a client that asks
 * for one first. A tag goes with any submission, through any client, and
 * survives an RM restart in the state store with the rest of the submission.
 *
 * <p>A policy that knows no deadlines ignores them. Under tetrisched, a job with
 * a deadline is an SLO job whatever its queue, and its value replaces the
 * class's constant.
 */
final class SloTags {
  static final String DEADLINE = "sojourn.deadline=";
  static final String VALUE = "sojourn.value=";

  /** Milliseconds after submission, or null. */
  final Long deadlineAfterSubmitMs;
  /** The value of meeting the deadline, or null. */
  final Double value;

  private SloTags(Long deadlineAfterSubmitMs, Double value) {
    this.deadlineAfterSubmitMs = deadlineAfterSubmitMs;
    this.value = value;
  }

  static final SloTags NONE = new SloTags(null, null);

  /**
   * Reads the tags; others are left alone.
   *
   * @throws IllegalArgumentException a tag of ours that does not parse, or given twice,
   *     with a message naming it
   */
  static SloTags parse(Collection<String> tags) {
    if (tags == null || tags.isEmpty()) {
      return NONE;
    }
    Long deadline = null;
    Double value = null;
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
      }
    }
    return deadline == null && value == null ? NONE : new SloTags(deadline, value);
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
          throw new IllegalArgumentException("application tag '" + tag + "': a deadline must be after submission");
        }
      }
    }
    throw new IllegalArgumentException("application tag '" + tag
        + "': the deadline must be a whole number with a unit, ms, s, m or h (e.g. sojourn.deadline=90s)");
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
