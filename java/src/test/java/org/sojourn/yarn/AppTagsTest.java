package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Arrays;
import java.util.Collections;
import org.junit.Test;

/** What a job tells the scheduler in its application tags: what parses, what is refused and why. */
public class AppTagsTest {
  private static AppTags parse(String... tags) {
    return AppTags.parse(Arrays.asList(tags));
  }

  private static String refusal(String... tags) {
    try {
      parse(tags);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    fail("accepted " + Arrays.toString(tags));
    return null;
  }

  @Test
  public void durationsTakeEachUnit() {
    assertEquals(1500L, (long) parse("sojourn.deadline=1500ms").deadlineAfterSubmitMs);
    assertEquals(90_000L, (long) parse("sojourn.deadline=90s").deadlineAfterSubmitMs);
    assertEquals(15 * 60_000L, (long) parse("sojourn.deadline=15m").deadlineAfterSubmitMs);
    assertEquals(2 * 3_600_000L, (long) parse("Sojourn.Deadline=2H").deadlineAfterSubmitMs);
  }

  @Test
  public void valueAndDeadlineComeTogetherOrAlone() {
    AppTags both = parse("team-a", "sojourn.value=250", "sojourn.deadline=30s");
    assertEquals(30_000L, (long) both.deadlineAfterSubmitMs);
    assertEquals(250.0, both.value, 0.0);
    AppTags value = parse("sojourn.value=2.5");
    assertNull(value.deadlineAfterSubmitMs);
    assertEquals(2.5, value.value, 0.0);
    AppTags task = parse("sojourn.task-duration=20s");
    assertEquals(20_000L, (long) task.taskMs);
    assertNull(task.deadlineAfterSubmitMs);
    assertNull(task.value);
    assertSame(AppTags.NONE, parse("team-a", "nightly"));
    assertSame(AppTags.NONE, AppTags.parse(Collections.emptySet()));
    assertSame(AppTags.NONE, AppTags.parse(null));
  }

  @Test
  public void malformedTagsAreRefusedNamingTheTag() {
    for (String bad : new String[] {"sojourn.deadline=90", "sojourn.deadline=soon", "sojourn.deadline=-5s",
        "sojourn.deadline=0s", "sojourn.deadline=s", "sojourn.deadline=9999999999999s",
        "sojourn.task-duration=20", "sojourn.task-duration=0ms"}) {
      String why = refusal(bad);
      assertTrue(why, why.contains(bad));
    }
    for (String bad : new String[] {"sojourn.value=0", "sojourn.value=-1", "sojourn.value=NaN",
        "sojourn.value=Infinity", "sojourn.value=much"}) {
      String why = refusal(bad);
      assertTrue(why, why.contains(bad) && why.contains("positive"));
    }
    assertTrue(refusal("sojourn.deadline=9s", "sojourn.deadline=10s").contains("twice"));
    assertTrue(refusal("sojourn.task-duration=9s", "sojourn.task-duration=10s").contains("twice"));
  }

  @Test
  public void theDeadlineIsCountedFromSubmissionInTheCoresClock() {
    AppTags t = parse("sojourn.deadline=90s");
    // submitted 10 s ago (wall clock); the core's clock reads 5,000 now: 80 s are left
    assertEquals(85_000L, (long) t.deadlineInCoreTime(1_000_000, 1_010_000, 5_000));
    // a deadline already past is now
    assertEquals(5_000L, (long) t.deadlineInCoreTime(1_000_000, 1_200_000, 5_000));
    assertNull(parse("sojourn.value=3").deadlineInCoreTime(0, 0, 0));
  }
}
