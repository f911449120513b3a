package org.sojourn.yarn;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sojourn.yarn.nm.SuspendListMac;

/**
 * The RM side of the suspend agents' channel: signs the suspended list that
 * the MXBean attribute {@code SignedSuspendedContainers} publishes (format in
 * {@link SuspendListMac}), so that the NodeManager agents act only on the
 * RM's own word, not on whatever answers at the RM's web address.
 *
 * <p>The secret is read once, at start-up. Without one (the key unset, or its
 * file unusable) the list is published marked unsigned and the agents act on
 * nothing; with {@code suspend=agent} that is an ERROR at start-up, naming
 * the key or the file. It never stops the RM: suspended containers then keep
 * running, as with no agent at all.
 */
final class SuspendListSigner {
  private static final Logger LOG = LoggerFactory.getLogger(SuspendListSigner.class);

  private final byte[] secret;
  private final AtomicLong seq = new AtomicLong();

  SuspendListSigner(byte[] secret) {
    this.secret = secret;
  }

  /** Reads the secret; logs why there is none when the agents need it. */
  static SuspendListSigner fromConf(Configuration conf, String suspendMode) {
    boolean needed = "agent".equals(suspendMode);
    try {
      byte[] s = SuspendListMac.readSecret(conf);
      if (s == null && needed) {
        LOG.error("sojourn: {}=agent but {} is not set: the suspended list is published unsigned and the "
            + "NodeManager agents will pause nothing, so suspended containers keep running. Put a shared "
            + "secret in a file readable by the yarn user only, on the RM and every NodeManager, and name it "
            + "there (java/README-shim.md, \"Suspend and resume\")", SojournConfig.SUSPEND, SuspendListMac.SECRET_FILE);
      }
      return new SuspendListSigner(s);
    } catch (IOException e) {
      if (needed) {
        LOG.error("sojourn: {}; the suspended list is published unsigned and the NodeManager agents will "
            + "pause nothing, so suspended containers keep running", e.getMessage());
      } else {
        LOG.warn("sojourn: {} (unused: {} is not agent)", e.getMessage(), SojournConfig.SUSPEND);
      }
      return new SuspendListSigner(null);
    }
  }

  /** The list, signed, with a sequence number above every earlier one. */
  String sign(String[] ids) {
    long now = System.currentTimeMillis();
    long n = seq.updateAndGet(prev -> Math.max(prev + 1, now * 1000));
    return SuspendListMac.sign(secret, n, now, Arrays.asList(ids));
  }
}
