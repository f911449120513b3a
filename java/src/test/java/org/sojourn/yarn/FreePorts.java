package org.sojourn.yarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers a test must start at an address it knows beforehand (an RM
 * restarted in place, an agent told the RM's web address).
 *
 * <p>The usual trick, binding port 0 and closing the socket, hands out a port
 * from the kernel's ephemeral range: any outgoing connection on the machine (a
 * NodeManager's heartbeat, gradle, another test JVM) may take it as its local
 * port before the server binds it, and the server fails with "Address already
 * in use" (seen in CI: RmRestartMiniClusterTest). A port below that range is
 * never given to an outgoing connection, so only another server picking the
 * same port at random could take it.
 */
public final class FreePorts {
  private static final int LOWEST = 10000;
  private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

  private FreePorts() {}

  /** A port that binds now, outside the ephemeral range, not handed out before in this JVM. */
  public static int next() throws IOException {
    int[] ephemeral = ephemeralRange();
    for (int attempt = 0; attempt < 500; attempt++) {
      int p = ThreadLocalRandom.current().nextInt(LOWEST, 65536);
      if ((p >= ephemeral[0] && p <= ephemeral[1]) || !GIVEN.add(p)) {
        continue;
      }
      if (bindable(p)) {
        return p;
      }
    }
    // The ephemeral range covers (nearly) every port: take one from it, with its race.
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Linux's ephemeral port range, or its default where it cannot be read. */
  private static int[] ephemeralRange() {
    try {
      String[] f = new String(Files.readAllBytes(Paths.get("/proc/sys/net/ipv4/ip_local_port_range")),
          StandardCharsets.US_ASCII).trim().split("\\s+");
      return new int[] {Integer.parseInt(f[0]), Integer.parseInt(f[1])};
    } catch (IOException | RuntimeException e) {
      return new int[] {32768, 60999};
    }
  }
}
