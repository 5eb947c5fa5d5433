package org.les.test;

import static org.les.test.JniTest.check;
import static org.les.test.JniTest.checkEq;
import static org.les.test.JniTest.expectLes;
import static org.les.test.JniTest.test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.les.ContextParams;
import org.les.GenerateParams;
import org.les.GenerateStats;
import org.les.LesContext;
import org.les.LesException;
import org.les.LesImage;
import org.les.LesModel;
import org.les.LesVision;
import org.les.MemoryPlan;
import org.les.VisionParams;
import org.les.VisionStats;

/**
 * Image input through the JNI binding (issue 19) on the multimodal fixtures (a tiny MiniCPM-V 4.6
 * mmproj and the qwen35moe text model with the image marker tokens): test-224x224.ppm encoded from
 * its file, from its RGB bytes and from its bytes in memory, then llama-mtmd-cli's greedy tokens
 * through generate with images and through appendImage (the reference of
 * tests/support/vision_api.h), the statistics, the encoder counted in a context's memory limit
 * (MemoryPlan.visionBytes against the C API's, PlanProbe), and bad input refused with LesException
 * carrying the C message. usage: JniVisionTest MULTIMODAL_FIXTURE_DIR; exit 77 when the fixtures are missing
 * (1 under CI=true).
 */
public final class JniVisionTest {
  private JniVisionTest() {}

  // llama.cpp's prompt and greedy tokens for test-224x224.ppm (kVisionRef224 of tests/support/vision_api.h).
  private static final String PROMPT =
      "<|im_start|>user\n<__media__>Describe the image.<|im_end|>\n<|im_start|>assistant\n";
  private static final int[] REF_224 = {1133, 81, 278, 1901, 2625, 2993, 3536, 2170, 3590, 3114, 3976, 3923, 3323,
      78, 209, 953};

  /** The RGB8 pixels of a binary PPM (P6, maxval 255, no comments); dims[0..1] receive width and height. */
  private static byte[] readPpm(byte[] file, int[] dims) {
    int pos = 0;
    String[] fields = new String[4];
    for (int f = 0; f < 4; f++) {
      while (Character.isWhitespace(file[pos])) pos++;
      int start = pos;
      while (!Character.isWhitespace(file[pos])) pos++;
      fields[f] = new String(file, start, pos - start, StandardCharsets.US_ASCII);
    }
    pos++;  // the single whitespace after maxval
    checkEq("P6", fields[0], "PPM magic");
    checkEq("255", fields[3], "PPM maxval");
    dims[0] = Integer.parseInt(fields[1]);
    dims[1] = Integer.parseInt(fields[2]);
    checkEq(dims[0] * dims[1] * 3, file.length - pos, "PPM pixel bytes");
    return Arrays.copyOfRange(file, pos, file.length);
  }

  private static GenerateParams greedy(int n) {
    GenerateParams p = GenerateParams.greedy(n);
    p.ignoreEos = true;
    p.parseSpecial = true;
    return p;
  }

  private static int[] generateIds(LesContext ctx, String prompt, LesImage[] images, GenerateParams p) {
    List<Integer> ids = new ArrayList<>();
    ctx.generate(prompt, images, p, (t, s) -> ids.add(t));
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: JniVisionTest MULTIMODAL_FIXTURE_DIR");
      System.exit(2);
    }
    File dir = new File(args[0]);
    String textModel = new File(dir, "qwen35moe-mm-F16.gguf").getPath();
    String mmproj = new File(dir, "mmproj-minicpmv4_6-tiny-F16.gguf").getPath();
    String ppm = new File(dir, "test-224x224.ppm").getPath();
    if (!new File(textModel).isFile() || !new File(mmproj).isFile() || !new File(ppm).isFile()) {
      String ci = System.getenv("CI");
      if ("true".equals(ci) || "1".equals(ci)) {
        System.err.println("fixture missing in " + dir);
        System.exit(1);
      }
      System.err.println("SKIPPED: fixture missing in " + dir);
      System.exit(77);
    }
    try (LesModel model = LesModel.load(textModel, 2);
        LesVision vision = LesVision.load(model, mmproj, new VisionParams().nThreads(2))) {
      run(model, vision, textModel, mmproj, ppm);
    } catch (Throwable t) {
      JniTest.failed++;
      System.out.println("FAIL loading " + textModel + " / " + mmproj + ": " + t);
    }
    System.out.println(JniTest.passed + " passed, " + JniTest.failed + " failed");
    System.exit(JniTest.failed == 0 ? 0 : 1);
  }

  private static void run(LesModel model, LesVision vision, String textModel, String mmproj, String ppm)
      throws Exception {
    byte[] fileBytes = Files.readAllBytes(new File(ppm).toPath());
    int[] dims = new int[2];
    byte[] rgb = readPpm(fileBytes, dims);

    test("encodeFile, then generate with the image: llama-mtmd-cli's greedy tokens", () -> {
      try (LesImage img = vision.encodeFile(ppm); LesContext ctx = new LesContext(model, new ContextParams().nCtx(256))) {
        checkEq(16 + 2, img.nTokens(), "positions: overview + <image> </image>");
        checkEq(Arrays.toString(REF_224), Arrays.toString(generateIds(ctx, PROMPT, new LesImage[] {img}, greedy(16))),
            "greedy tokens");
        GenerateStats s = ctx.lastStats();
        checkEq(36L, (long) s.nPromptTokens, "prompt positions (text and image)");
      }
    });

    test("encodeRgb and encodeMemory give the same tokens; appendImage then generate continues alike", () -> {
      try (LesImage fromRgb = vision.encodeRgb(rgb, dims[0], dims[1]);
          LesImage fromMemory = vision.encodeMemory(fileBytes)) {
        for (LesImage img : new LesImage[] {fromRgb, fromMemory}) {
          try (LesContext ctx = new LesContext(model, new ContextParams().nCtx(256))) {
            checkEq(Arrays.toString(REF_224),
                Arrays.toString(generateIds(ctx, PROMPT, new LesImage[] {img}, greedy(16))), "greedy tokens");
          }
        }
        // The same prompt split around appendImage.
        int marker = PROMPT.indexOf(LesImage.MARKER);
        try (LesContext ctx = new LesContext(model, new ContextParams().nCtx(256))) {
          GenerateParams none = greedy(0);
          ctx.generate(PROMPT.substring(0, marker), none, null);
          int before = ctx.nPast();
          ctx.appendImage(fromRgb);
          checkEq(before + fromRgb.nTokens(), ctx.nPast(), "appendImage took nTokens() positions");
          List<Integer> ids = new ArrayList<>();
          ctx.generate(PROMPT.substring(marker + LesImage.MARKER.length()), greedy(16), (t, s) -> ids.add(t));
          checkEq(Arrays.toString(REF_224), ids.toString(), "greedy tokens after appendImage");
        }
      }
    });

    test("stats count the encodes", () -> {
      VisionStats s = vision.stats();
      check(s.nImagesEncoded >= 3, "images encoded: " + s);
      check(s.nImageTokens >= 16 * s.nImagesEncoded, "embedding rows: " + s);
      check(s.weightBytes > 0 && s.weightBytesResident == s.weightBytes, "weights resident: " + s);
      check(s.memoryBytes >= s.weightBytes && s.encodeMsTotal > 0, "memory and time: " + s);
    });

    test("bad input: LesException with the C message; the context stays usable", () -> {
      LesException e = expectLes(LesException.IO, () -> vision.encodeFile("/nonexistent/cat.png"));
      check(e.getMessage().contains("/nonexistent/cat.png"), "names the file: " + e.getMessage());
      e = expectLes(LesException.INVALID_ARGUMENT, () -> vision.encodeRgb(new byte[0], 0, 0));
      check(e.getMessage().contains("zero-size"), "zero-size image: " + e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT, () -> vision.encodeRgb(new byte[5], 2, 2));
      expectLes(LesException.INVALID_ARGUMENT, () -> vision.encodeRgb(null, 2, 2));
      expectLes(LesException.INVALID_ARGUMENT, () -> vision.encodeFile(null));
      expectLes(LesException.INVALID_ARGUMENT, () -> vision.encodeMemory(null));
      expectLes(LesException.INVALID_ARGUMENT, () -> vision.encodeMemory(new byte[0]));
      e = expectLes(LesException.FORMAT, () -> vision.encodeMemory("not an image".getBytes(StandardCharsets.UTF_8)));
      check(!e.getMessage().isEmpty(), e.getMessage());
      e = expectLes(LesException.IO, () -> LesVision.load(model, "/nonexistent/mmproj.gguf"));
      check(e.getMessage().contains("/nonexistent/mmproj.gguf"), "names the file: " + e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT, () -> LesVision.load(null, mmproj));
      expectLes(LesException.INVALID_ARGUMENT, () -> LesVision.load(model, null));
      try (LesImage img = vision.encodeFile(ppm); LesContext ctx = new LesContext(model, new ContextParams().nCtx(256))) {
        e = expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate("no marker", new LesImage[] {img}, greedy(4), null));
        check(!e.getMessage().isEmpty(), "marker count: " + e.getMessage());
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(PROMPT, (LesImage[]) null, greedy(4), null));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(PROMPT, new LesImage[] {null}, greedy(4), null));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.appendImage(null));
        checkEq(0, ctx.nPast(), "nothing appended");
        try (LesContext small = new LesContext(model, new ContextParams().nCtx(8))) {
          e = expectLes(LesException.CONTEXT_FULL, () -> small.appendImage(img));
          checkEq(0, small.nPast(), "context unchanged after CONTEXT_FULL");
        }
        checkEq(Arrays.toString(REF_224), Arrays.toString(generateIds(ctx, PROMPT, new LesImage[] {img}, greedy(16))),
            "greedy tokens after the refused calls");
      }
    });

    test("memory limit with the encoder: visionBytes as the C API counts it; a closed encoder is refused", () -> {
      final long limit = 2L << 30;
      ContextParams cp = new ContextParams().nCtx(256).memoryLimitBytes(limit).vision(vision);
      long visionBytes;
      try (LesContext ctx = new LesContext(model, cp); LesImage img = vision.encodeFile(ppm)) {
        MemoryPlan plan = ctx.memoryPlan();
        visionBytes = plan.visionBytes;
        check(visionBytes > 0, "visionBytes " + visionBytes);
        checkEq(vision.stats().memoryBytes, visionBytes, "visionBytes is the encoder's peak (VisionStats.memoryBytes)");
        checkEq(0L, plan.draftBytes, "no draft model");
        long sum = plan.baselineBytes + plan.visionBytes + plan.denseBytes + plan.kvBytes + plan.scratchBytes
            + (plan.resident ? plan.routedBytes : plan.expertBudgetBytes);
        check(sum <= limit, "parts " + sum + " within the limit");
        checkEq(Arrays.toString(REF_224), Arrays.toString(generateIds(ctx, PROMPT, new LesImage[] {img}, greedy(16))),
            "greedy tokens in the limited context");
      }
      long[] c = PlanProbe.cApiShares(textModel, 256, limit, 2, null, mmproj);
      if (c != null) {
        checkEq(c[1], visionBytes, "visionBytes: the C API's for the same parameters");
        checkEq(0L, c[0], "C API draft_bytes");
      }
      LesVision closed = LesVision.load(model, mmproj, new VisionParams().nThreads(2));
      closed.close();
      cp.vision = closed;
      LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> new LesContext(model, cp).close());
      check(e.getMessage().contains("ContextParams.vision") && e.getMessage().contains("closed"),
          "message names the field: " + e.getMessage());
      cp.vision = vision;
      try (LesContext ctx = new LesContext(model, cp)) {
        checkEq(visionBytes, ctx.memoryPlan().visionBytes, "params usable after the refusal");
      }
    });

    test("closed image and closed vision throw; images outlive their vision", () -> {
      LesImage img = vision.encodeFile(ppm);
      img.close();
      img.close();  // idempotent
      LesException e = expectLes(LesException.INVALID_ARGUMENT, img::nTokens);
      check(e.getMessage().contains("closed"), e.getMessage());
      LesVision second = LesVision.load(model, mmproj, new VisionParams().nThreads(2));
      LesImage survivor = second.encodeRgb(rgb, dims[0], dims[1]);
      second.close();
      expectLes(LesException.INVALID_ARGUMENT, () -> second.encodeFile(ppm));
      expectLes(LesException.INVALID_ARGUMENT, second::stats);
      try (LesContext ctx = new LesContext(model, new ContextParams().nCtx(256))) {
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.appendImage(img));
        checkEq(Arrays.toString(REF_224),
            Arrays.toString(generateIds(ctx, PROMPT, new LesImage[] {survivor}, greedy(16))), "after vision.close()");
      }
      survivor.close();
    });
  }
}
