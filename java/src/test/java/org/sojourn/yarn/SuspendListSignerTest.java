package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import javax.management.ObjectName;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.Test;
import org.sojourn.yarn.nm.SuspendListMac;

/**
 * The RM's side of the suspend agents' channel: the MXBean attribute
 * {@code SignedSuspendedContainers}, read over JMX as an agent reads it.
 */
public class SuspendListSignerTest extends SojournTestBase {
  private static final String SECRET = "0123456789abcdef0123456789abcdef-rm-side-test";

  private static String signedOverJmx() throws Exception {
    return (String) ManagementFactory.getPlatformMBeanServer().getAttribute(
        new ObjectName("Hadoop:service=ResourceManager,name=SojournScheduler"), "SignedSuspendedContainers");
  }

  private static File secretFile() throws IOException {
    File f = File.createTempFile("sojourn-suspend", ".secret");
    f.deleteOnExit();
    Files.write(f.toPath(), (SECRET + "\n").getBytes(StandardCharsets.UTF_8));
    Files.setPosixFilePermissions(f.toPath(), PosixFilePermissions.fromString("rw-------"));
    return f;
  }

  @Test(timeout = 60000)
  public void theRmSignsItsListWithTheSecretAndARisingSequence() throws Exception {
    YarnConfiguration conf = conf();
    conf.set(SojournConfig.SUSPEND, "agent");
    conf.set(SuspendListMac.SECRET_FILE, secretFile().getPath());
    start(conf);
    byte[] secret = SECRET.getBytes(StandardCharsets.UTF_8);
    SuspendListMac.Signed first = SuspendListMac.verify(secret, signedOverJmx());
    SuspendListMac.Signed second = SuspendListMac.verify(secret, signedOverJmx());
    assertTrue(first.containers.isEmpty());
    assertTrue(second.seq + " after " + first.seq, second.seq > first.seq);
    assertTrue(Math.abs(System.currentTimeMillis() - second.atMs) < 10000);
  }

  /** Without a secret the RM still starts; its list says it is unsigned, so no agent acts on it. */
  @Test(timeout = 60000)
  public void withoutASecretTheListIsMarkedUnsigned() throws Exception {
    YarnConfiguration conf = conf();
    conf.set(SojournConfig.SUSPEND, "agent");
    start(conf);
    String line = signedOverJmx();
    assertTrue(line, line.endsWith(" unsigned"));
    try {
      SuspendListMac.verify(SECRET.getBytes(StandardCharsets.UTF_8), line);
      throw new AssertionError("an unsigned list verified");
    } catch (IOException e) {
      String why = e.getMessage();
      assertTrue(why, why.contains("unsigned") && why.contains(SuspendListMac.SECRET_FILE));
    }
    assertEquals("agent", scheduler().getSuspendMode());
  }
}
