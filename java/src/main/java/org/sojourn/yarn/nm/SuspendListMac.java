package org.sojourn.yarn.nm;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.hadoop.conf.Configuration;

/**
 * The signed form of the RM's suspended list, shared by the RM (which signs)
 * and the NodeManager agents (which verify). One line of text:
 *
 * <pre>v1 SEQ AT IDS MAC</pre>
 *
 * <ul>
 *   <li>{@code SEQ}: a number the RM raises at every read (at least its clock
 *   in µs, so it also grows across RM restarts and failovers); an agent
 *   refuses a list whose SEQ is not above the last one it accepted (a replay);</li>
 *   <li>{@code AT}: the RM's clock (epoch ms) when signed; an agent refuses a
 *   list more than {@value #MAX_AGE_MS} ms off its own clock (a replay after
 *   the agent restarted, or clocks that disagree);</li>
 *   <li>{@code IDS}: the suspended container ids, comma-separated, or {@code -};</li>
 *   <li>{@code MAC}: HMAC-SHA256 of {@code v1 SEQ AT IDS} with the shared
 *   secret, in hex; {@code unsigned} when the RM has no secret.</li>
 * </ul>
 *
 * <p>The secret is the content of the file named by {@value #SECRET_FILE}
 * (the same key in the RM's and the NodeManagers' yarn-site.xml), trimmed: at
 * least {@value #MIN_SECRET_CHARS} characters, in a file no group or other
 * user may read or write (the key is in yarn-site.xml, which clients read and
 * the RM's /conf page shows; the file is not).
 */
public final class SuspendListMac {
  public static final String SECRET_FILE = "yarn.scheduler.sojourn.suspend.secret-file";
  public static final int MIN_SECRET_CHARS = 32;
  /** How far a list's AT may be from the agent's clock. */
  public static final long MAX_AGE_MS = 60_000;
  static final String VERSION = "v1";
  static final String UNSIGNED = "unsigned";
  private static final Pattern CONTAINER = Pattern.compile("container_[A-Za-z0-9_]+");

  private SuspendListMac() {
  }

  /** A verified list. */
  public static final class Signed {
    public final long seq;
    public final long atMs;
    public final List<String> containers;

    Signed(long seq, long atMs, List<String> containers) {
      this.seq = seq;
      this.atMs = atMs;
      this.containers = containers;
    }
  }

  /**
   * The secret named by {@value #SECRET_FILE}; null when the key is not set.
   *
   * @throws IOException naming the file: unreadable, readable or writable by
   *     group or others, or too short
   */
  public static byte[] readSecret(Configuration conf) throws IOException {
    String path = conf.getTrimmed(SECRET_FILE, "");
    if (path.isEmpty()) {
      return null;
    }
    File f = new File(path);
    if (!f.isFile()) {
      throw new IOException(SECRET_FILE + "=" + path + ": no such file");
    }
    try {
      Set<PosixFilePermission> p = Files.getPosixFilePermissions(f.toPath());
      Set<PosixFilePermission> open = EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE);
      open.retainAll(p);
      if (!open.isEmpty()) {
        throw new IOException(SECRET_FILE + "=" + path + " is open to group or others (" + open
            + "): make it readable by its owner only (chmod 600), the user the daemon runs as");
      }
    } catch (UnsupportedOperationException e) {
      // Not a POSIX file system: nothing to check.
    }
    String secret = new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8).trim();
    if (secret.length() < MIN_SECRET_CHARS) {
      throw new IOException(SECRET_FILE + "=" + path + " holds " + secret.length() + " characters; at least "
          + MIN_SECRET_CHARS + " are needed (e.g. openssl rand -hex 32 > " + path + ")");
    }
    return secret.getBytes(StandardCharsets.UTF_8);
  }

  /** What the MAC covers. */
  static String payload(long seq, long atMs, Collection<String> ids) {
    return VERSION + " " + seq + " " + atMs + " " + (ids.isEmpty() ? "-" : String.join(",", ids));
  }

  /** The list signed with {@code secret}; marked {@code unsigned} when it is null. */
  public static String sign(byte[] secret, long seq, long atMs, Collection<String> ids) {
    String payload = payload(seq, atMs, ids);
    return payload + " " + (secret == null ? UNSIGNED : hex(hmac(secret, payload)));
  }

  /**
   * The list in {@code line} if it is well formed and its MAC is right; its
   * SEQ and AT are the caller's to check.
   *
   * @throws IOException saying why it is refused
   */
  public static Signed verify(byte[] secret, String line) throws IOException {
    String text = line == null ? "" : line.trim();
    String[] f = text.split(" ");
    if (f.length != 5 || !VERSION.equals(f[0])) {
      throw new IOException("not a signed suspended list: '" + clip(text) + "'");
    }
    if (UNSIGNED.equals(f[4])) {
      throw new IOException("the list is unsigned: the RM has no " + SECRET_FILE);
    }
    int cut = text.lastIndexOf(' ');
    byte[] want = hmac(secret, text.substring(0, cut));
    byte[] got;
    try {
      got = unhex(f[4]);
    } catch (IllegalArgumentException e) {
      throw new IOException("the list's signature is not hex: '" + clip(f[4]) + "'");
    }
    if (!MessageDigest.isEqual(want, got)) {
      throw new IOException("the list's signature is wrong (another secret, or the list was altered)");
    }
    long seq;
    long at;
    try {
      seq = Long.parseLong(f[1]);
      at = Long.parseLong(f[2]);
    } catch (NumberFormatException e) {
      throw new IOException("a signed list with a bad sequence or time: '" + clip(text) + "'");
    }
    List<String> ids = new ArrayList<>();
    if (!"-".equals(f[3])) {
      for (String id : f[3].split(",")) {
        if (!CONTAINER.matcher(id).matches()) {
          throw new IOException("a signed list names '" + clip(id) + "', not a container id");
        }
        ids.add(id);
      }
    }
    return new Signed(seq, at, ids);
  }

  private static byte[] hmac(byte[] secret, String payload) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      return mac.doFinal(payload.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available: " + e, e);
    }
  }

  private static String hex(byte[] b) {
    StringBuilder s = new StringBuilder(2 * b.length);
    for (byte x : b) {
      s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
    }
    return s.toString();
  }

  private static byte[] unhex(String s) {
    if (s.length() % 2 != 0) {
      throw new IllegalArgumentException(s);
    }
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      int hi = Character.digit(s.charAt(2 * i), 16);
      int lo = Character.digit(s.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException(s);
      }
      b[i] = (byte) ((hi << 4) | lo);
    }
    return b;
  }

  static String clip(String s) {
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }
}
