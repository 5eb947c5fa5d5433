package org.les.test;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the C API reports as a draft model's and a vision encoder's share of a memory limit, from
 * the test/memory_plan_probe.c program (a separate process calling les.h directly), for comparing
 * with the wrapper's MemoryPlan.draftBytes / visionBytes for the same parameters. CTest passes the
 * program's path in the environment variable LES_MEMORY_PLAN_PROBE. Not thread-safe (tests only).
 */
final class PlanProbe {
  private PlanProbe() {}

  /**
   * {draft_bytes, vision_bytes} of a context over modelPath with nCtx and limitBytes, models and
   * encoder loaded with nThreads, draftPath / mmprojPath null for none; null when
   * LES_MEMORY_PLAN_PROBE is unset (run outside CTest; an AssertionError under CI=true). Throws
   * AssertionError when the probe fails or prints something else.
   */
  static long[] cApiShares(String modelPath, int nCtx, long limitBytes, int nThreads, String draftPath,
      String mmprojPath) throws Exception {
    String probe = System.getenv("LES_MEMORY_PLAN_PROBE");
    if (probe == null || probe.isEmpty()) {
      String ci = System.getenv("CI");
      if ("true".equals(ci) || "1".equals(ci)) throw new AssertionError("LES_MEMORY_PLAN_PROBE is not set");
      System.out.println("  LES_MEMORY_PLAN_PROBE unset: not compared with the C API");
      return null;
    }
    Process p = new ProcessBuilder(probe, modelPath, Integer.toString(nCtx), Long.toString(limitBytes),
        Integer.toString(nThreads), draftPath != null ? draftPath : "-", mmprojPath != null ? mmprojPath : "-")
        .redirectErrorStream(true).start();
    String out = readAll(p.getInputStream());
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("memory_plan_probe did not finish: " + out);
    }
    Matcher m = Pattern.compile("draft_bytes=([0-9]+) vision_bytes=([0-9]+)").matcher(out);
    if (p.exitValue() != 0 || !m.find()) {
      throw new AssertionError("memory_plan_probe exit " + p.exitValue() + ": " + out);
    }
    return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
  }

  private static String readAll(InputStream in) throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    byte[] chunk = new byte[4096];
    for (int n; (n = in.read(chunk)) > 0;) buf.write(chunk, 0, n);
    return new String(buf.toByteArray(), StandardCharsets.UTF_8);
  }
}
