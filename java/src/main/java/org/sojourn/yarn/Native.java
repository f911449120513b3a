package org.sojourn.yarn;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Every native method of Sojourn, and one open core as an {@link AutoCloseable}
 * handle. Events, decisions and log lines cross as JSON (the serde encoding of
 * {@code sojourn_core::protocol}) or, for the scheduler's steps, in the
 * binary layout of {@link Wire}; see {@code rust/jni}.
 *
 * <p>The library is loaded from {@code java.library.path} first
 * ({@code libsojourn_jni.so}), else extracted from this jar's
 * {@code native/linux-x86_64/} resource to a directory named by its content
 * ({@link #extract}).
 *
 * <p>Thread safety: the native side locks each core; the scheduler also calls
 * it under its own single lock, so the core is never re-entered.
 */
public final class Native implements AutoCloseable {
  static final String LIBRARY = "sojourn_jni";
  static final String RESOURCE = "/native/linux-x86_64/libsojourn_jni.so";
  /**
   * The child process TetriSched's solves run in
   * ({@code yarn.scheduler.sojourn.offload.isolation=process}), built with the
   * library (rust/jni/src/bin/sojourn-offload.rs).
   */
  static final String OFFLOAD_RESOURCE = "/native/linux-x86_64/sojourn-offload";

  private static volatile File offloadExecutable;

  private static volatile String loadedFrom;

  private final Object lock = new Object();
  private long handle;

  private Native(long handle) {
    this.handle = handle;
  }

  /**
   * Opens a core running {@code policy} with its parameters (keys without the
   * {@code yarn.scheduler.sojourn.<policy>.} prefix).
   *
   * @param settingsJson core settings: seed, max_allocation, record (flight recorder path)
   * @param logLevel 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace
   * @throws IllegalArgumentException for an unknown policy, key or bad value, naming it
   */
  public static Native open(String policy, Map<String, String> params,
      String settingsJson, int logLevel) {
    load();
    String[] keys = params.keySet().toArray(new String[0]);
    String[] values = new String[keys.length];
    for (int i = 0; i < keys.length; i++) {
      values[i] = params.get(keys[i]);
    }
    return new Native(nCreate(policy, keys, values, settingsJson, logLevel));
  }

  /**
   * One step of the core (its cycle: the policy's timers due by
   * {@code nowMs} fire, then the events of the JSON array apply in order);
   * returns the JSON response. {@code nowMs} never goes backwards.
   */
  public String step(long nowMs, String eventsJson) {
    synchronized (lock) {
      return nStep(live(), nowMs, eventsJson);
    }
  }

  /**
   * One step as {@link #step(long, String)}, in the bridge's binary layout
   * ({@link Wire}): the events are the first {@code length} bytes of
   * {@code events}, and the response is written into {@code response}, or, when
   * it does not fit, into a larger buffer made for it. Both are direct buffers,
   * not touched by anyone else during the call. Returns the buffer holding the
   * response, from position 0 to its limit.
   */
  public ByteBuffer step(long nowMs, ByteBuffer events, int length, ByteBuffer response) {
    synchronized (lock) {
      long h = live();
      int n = nStepBinary(h, nowMs, events, length, response);
      if (n < 0) {
        // The step happened and its response waits on the native side.
        response = ByteBuffer.allocateDirect(-n + (-n >> 1)).order(ByteOrder.LITTLE_ENDIAN);
        n = nTakeResponse(h, response);
      }
      response.clear();
      response.limit(n);
      return response;
    }
  }

  /** When the policy next wants a step (ms), or -1. */
  public long nextWake() {
    synchronized (lock) {
      return nNextWake(live());
    }
  }

  /** The policy's and the mirror's state for operators, as JSON. */
  public String describe() {
    synchronized (lock) {
      return nDescribe(live());
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (handle != 0) {
        long h = handle;
        handle = 0;
        nClose(h);
      }
    }
  }

  public boolean isOpen() {
    synchronized (lock) {
      return handle != 0;
    }
  }

  private long live() {
    if (handle == 0) {
      throw new IllegalStateException("sojourn: the native core is closed");
    }
    return handle;
  }

  /** Log lines the native side buffered on this thread outside a call, as JSON. */
  public static String drainLogs() {
    load();
    return nDrainLogs();
  }

  /** Every policy and its parameter schema, as JSON. */
  public static String catalog() {
    load();
    return nCatalog();
  }

  /**
   * Re-runs a flight recording ({@code yarn.scheduler.sojourn.record.path}:
   * the file, its {@code .meta} with policy, parameters and seed, and its
   * {@code .decisions}) with a fresh core, and compares the decisions. Returns
   * JSON {@code {"records", "decisions", "recorded_decisions", "identical",
   * "first_difference"}}.
   */
  public static String replay(String path) {
    load();
    return nReplay(path);
  }

  /** Where the library was loaded from ("java.library.path" or a file path). */
  public static String loadedFrom() {
    return loadedFrom;
  }

  /** Loads the native library once. */
  public static void load() {
    if (loadedFrom != null) {
      return;
    }
    synchronized (Native.class) {
      if (loadedFrom != null) {
        return;
      }
      UnsatisfiedLinkError fromPath;
      try {
        System.loadLibrary(LIBRARY);
        loadedFrom = "java.library.path";
        return;
      } catch (UnsatisfiedLinkError e) {
        fromPath = e;
      }
      try {
        File f = extract();
        System.load(f.getAbsolutePath());
        loadedFrom = f.getAbsolutePath();
      } catch (IOException | UnsatisfiedLinkError e) {
        UnsatisfiedLinkError err = new UnsatisfiedLinkError(
            "sojourn: cannot load lib" + LIBRARY + ".so from java.library.path ("
                + fromPath.getMessage() + ") nor from the jar resource " + RESOURCE
                + " (" + e + "); this jar carries linux-x86_64 only, and this JVM runs on "
                + System.getProperty("os.name") + "/" + System.getProperty("os.arch"));
        err.initCause(e);
        throw err;
      }
    }
  }

  /**
   * The jar's library as a file: {@code <java.io.tmpdir>/sojourn-jni-<user>-<sha-256 prefix>/libsojourn_jni.so}.
   * The directory is named by the library's content, so every RM start of the
   * same build reuses one copy and a crash leaves nothing new behind (the old
   * scheme made a fresh {@code sojourn-jni<random>} directory per start;
   * those this user left are removed here). The directory must belong to
   * this user and be writable by no one else, and a file already there is
   * loaded only if its content hash matches: {@code /tmp} is shared.
   */
  static File extract() throws IOException {
    return extract(RESOURCE, "libsojourn_jni.so", false);
  }

  /**
   * The jar's {@code sojourn-offload} executable as a file, extracted as
   * {@link #extract} extracts the library (its own content-named directory,
   * mode 0700) and made executable; once per JVM.
   *
   * @throws IOException when the jar carries none (a jar packaged with
   *     {@code -PnativeLib} and no {@code -PoffloadBin}) or it cannot be written
   */
  static File offloadExecutable() throws IOException {
    File f = offloadExecutable;
    if (f == null) {
      synchronized (Native.class) {
        f = offloadExecutable;
        if (f == null) {
          f = extract(OFFLOAD_RESOURCE, "sojourn-offload", true);
          offloadExecutable = f;
        }
      }
    }
    return f;
  }

  private static File extract(String resource, String name, boolean executable) throws IOException {
    byte[] bytes;
    try (InputStream in = Native.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IOException("resource " + resource + " is not in the jar");
      }
      bytes = readAll(in);
    }
    String hash = sha256(bytes);
    Path tmp = java.nio.file.Paths.get(System.getProperty("java.io.tmpdir"));
    String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
    Path dir = tmp.resolve("sojourn-jni-" + user + "-" + hash.substring(0, 16));
    removeStaleDirs(tmp);
    if (!Files.isDirectory(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      try {
        Files.createDirectory(dir, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // another RM of this user made it at the same moment: checked below
      }
    }
    checkPrivate(dir);
    Path lib = dir.resolve(name);
    if (Files.isRegularFile(lib, java.nio.file.LinkOption.NOFOLLOW_LINKS)
        && sha256(Files.readAllBytes(lib)).equals(hash)
        && (!executable || Files.isExecutable(lib))) {
      return lib.toFile();
    }
    // Written aside and renamed: a concurrent start never loads half a file.
    Path part = Files.createTempFile(dir, name, ".part");
    try {
      Files.write(part, bytes);
      if (executable) {
        Files.setPosixFilePermissions(part, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
      }
      Files.move(part, lib, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(part);
    }
    return lib.toFile();
  }

  private static byte[] readAll(InputStream in) throws IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(1 << 22);
    byte[] buf = new byte[1 << 16];
    for (int n; (n = in.read(buf)) > 0; ) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  static String sha256(byte[] bytes) throws IOException {
    try {
      byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
      StringBuilder sb = new StringBuilder();
      for (byte b : d) {
        sb.append(String.format("%02x", b & 0xff));
      }
      return sb.toString();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IOException("SHA-256 is not available: " + e, e);
    }
  }

  /** The extraction directory is ours and private, or we refuse to load from it. */
  private static void checkPrivate(Path dir) throws IOException {
    java.nio.file.attribute.PosixFileAttributes a = Files.readAttributes(dir,
        java.nio.file.attribute.PosixFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
    String me = System.getProperty("user.name");
    java.util.Set<java.nio.file.attribute.PosixFilePermission> p = a.permissions();
    if (!a.isDirectory() || (me != null && !a.owner().getName().equals(me))
        || p.contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
        || p.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
      throw new IOException(dir + " is not a private directory of user " + me + " (owner "
          + a.owner().getName() + ", " + java.nio.file.attribute.PosixFilePermissions.toString(p)
          + "); remove it or set java.io.tmpdir");
    }
  }

  /**
   * Removes this user's {@code sojourn-jni<digits>} directories, which the
   * per-start extraction of earlier versions left behind when the JVM did not
   * exit cleanly. A library still mapped by a running JVM stays mapped (Linux
   * keeps an unlinked file's pages). Failures are ignored: this is tidying.
   */
  private static void removeStaleDirs(Path tmp) {
    String me = System.getProperty("user.name");
    try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(tmp, "sojourn-jni[0-9]*")) {
      for (Path d : ds) {
        try {
          if (!Files.isDirectory(d, java.nio.file.LinkOption.NOFOLLOW_LINKS)
              || me == null || !Files.getOwner(d, java.nio.file.LinkOption.NOFOLLOW_LINKS).getName().equals(me)) {
            continue;
          }
          try (java.nio.file.DirectoryStream<Path> files = Files.newDirectoryStream(d)) {
            for (Path f : files) {
              Files.deleteIfExists(f);
            }
          }
          Files.deleteIfExists(d);
        } catch (IOException | RuntimeException e) {
          // leave it: another user's, or in the middle of something
        }
      }
    } catch (IOException | RuntimeException e) {
      // the temp dir cannot be listed: nothing to tidy
    }
  }

  static native long nCreate(String policy, String[] keys, String[] values,
      String settingsJson, int logLevel);

  static native String nStep(long handle, long now, String eventsJson);

  static native int nStepBinary(long handle, long now, ByteBuffer events, int length, ByteBuffer response);

  static native int nTakeResponse(long handle, ByteBuffer response);

  static native long nNextWake(long handle);

  static native String nDescribe(long handle);

  static native void nClose(long handle);

  static native String nDrainLogs();

  static native String nCatalog();

  static native String nReplay(String path);

  static native void nPanicForTest();

  static native String nEventsRoundTripForTest(String eventsJson);

  static native String nEventSamplesForTest();

  static native String nResponseSampleForTest();

  /**
   * The events (a JSON array) decoded as a step decodes them and encoded
   * again: a field serde does not know is dropped, one missing is defaulted,
   * a required one missing is an IllegalArgumentException naming it (tests of
   * the protocol's schema only).
   */
  static String eventsRoundTripForTest(String eventsJson) {
    load();
    return nEventsRoundTripForTest(eventsJson);
  }

  /** One sample of every event variant, every field away from its default (a JSON array; tests only). */
  static String eventSamplesForTest() {
    load();
    return nEventSamplesForTest();
  }

  /** A step's response carrying one sample of every decision variant, every field set (tests only). */
  static String responseSampleForTest() {
    load();
    return nResponseSampleForTest();
  }

  static native String nWireEventsToJsonForTest(ByteBuffer events, int length, ByteBuffer scratch);

  static native int nWireResponseSampleForTest(ByteBuffer response);

  /**
   * The first {@code length} bytes of {@code events}, in the binary layout,
   * decoded as a binary step decodes them and written as a JSON array (an
   * event whose value is wrong as {"error": message}); broken framing is an
   * IllegalArgumentException naming the field (tests only).
   */
  static String wireEventsToJsonForTest(ByteBuffer events, int length) {
    load();
    return nWireEventsToJsonForTest(events, length, Wire.direct(1));
  }

  /** {@link #responseSampleForTest} in the binary layout, position 0 to limit (tests only). */
  static ByteBuffer wireResponseSampleForTest() {
    load();
    ByteBuffer b = Wire.direct(1 << 16);
    int n = nWireResponseSampleForTest(b);
    if (n < 0) {
      throw new IllegalStateException("the response sample needs " + -n + " bytes");
    }
    b.limit(n);
    return b;
  }

  static native void nPanicInCoreForTest(long handle);

  /** Panics inside this core, poisoning it, as a policy bug would (tests only). */
  void panicInCoreForTest() {
    synchronized (lock) {
      nPanicInCoreForTest(live());
    }
  }
}
