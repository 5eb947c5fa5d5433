package org.les.test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.les.ContextParams;
import org.les.GenerateParams;
import org.les.GenerateStats;
import org.les.LesContext;
import org.les.LesException;
import org.les.LesModel;

/**
 * Tests of the JNI binding against llama.cpp's reference for the trained fixture model (the
 * arguments come from run_java_test.sh, which reads the reference JSON): greedy generation,
 * tokenization, decode/logits, KV cache trim/reset, bad use (closed objects, null arguments,
 * out-of-range tokens), cancellation from another thread and from the listener.
 * A plain main() (no JUnit): prints "N passed, M failed" and exits 1 on any failure.
 *
 * usage: JniTest MODEL PROMPT PROMPT_TOKENS PROMPT_TOKENS_NO_SPECIAL GREEDY_IDS GREEDY_TEXT
 * (token lists comma-separated)
 */
public final class JniTest {
  static int passed = 0;
  static int failed = 0;

  private static String modelPath;
  private static String prompt;
  private static int[] promptTokens;
  private static int[] promptTokensNoSpecial;
  private static int[] greedyIds;
  private static String greedyText;

  interface Body {
    void run() throws Exception;
  }

  static void test(String name, Body body) {
    try {
      body.run();
      passed++;
      System.out.println("PASS " + name);
    } catch (Throwable t) {
      failed++;
      System.out.println("FAIL " + name + ": " + t);
      t.printStackTrace(System.out);
    }
  }

  static void check(boolean cond, String what) {
    if (!cond) throw new AssertionError(what);
  }

  static void checkEq(Object expected, Object got, String what) {
    if (!expected.equals(got)) throw new AssertionError(what + ": expected <" + expected + "> got <" + got + ">");
  }

  /** Runs body, which must throw LesException with the given status; returns it. */
  static LesException expectLes(int status, Body body) throws Exception {
    try {
      body.run();
    } catch (LesException e) {
      checkEq(LesException.statusName(status), LesException.statusName(e.status()), "status of " + e.getMessage());
      check(e.getMessage() != null && !e.getMessage().isEmpty(), "LesException has a message");
      return e;
    }
    throw new AssertionError("expected LesException " + LesException.statusName(status));
  }

  private static int[] ints(String csv) {
    return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
  }

  public static void main(String[] args) {
    if (args.length != 6) {
      System.err.println("usage: JniTest MODEL PROMPT PROMPT_TOKENS PROMPT_TOKENS_NO_SPECIAL GREEDY_IDS GREEDY_TEXT");
      System.exit(2);
    }
    modelPath = args[0];
    prompt = args[1];
    promptTokens = ints(args[2]);
    promptTokensNoSpecial = ints(args[3]);
    greedyIds = ints(args[4]);
    greedyText = args[5];
    System.out.println("libles " + LesModel.libraryVersion());

    try (LesModel model = LesModel.load(modelPath, 2)) {
      runWithModel(model);
      JniApiTest.run(model, modelPath, prompt, greedyText, greedyIds.length);
    } catch (Throwable t) {
      failed++;
      System.out.println("FAIL loading " + modelPath + ": " + t);
    }
    runWithoutModel();

    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }

  private static void runWithModel(LesModel model) {
    test("hyperparameters and metadata", () -> {
      check(model.nVocab() > greedyIds[0], "n_vocab " + model.nVocab());
      check(model.nExpert() > 0 && model.nExpertUsed() > 0, "MoE model");
      checkEq("qwen3moe", model.metadata("general.architecture"), "general.architecture");
      check(model.metadata("no.such.key") == null, "absent key gives null");
      check(model.description().startsWith("qwen3moe"), "description " + model.description());
    });

    test("tokenize matches llama.cpp", () -> {
      checkEq(Arrays.toString(promptTokens), Arrays.toString(model.tokenize(prompt)), "with special tokens");
      checkEq(Arrays.toString(promptTokensNoSpecial), Arrays.toString(model.tokenize(prompt, false, false)),
          "without special tokens");
      checkEq(greedyText, model.detokenize(greedyIds), "detokenize of the greedy ids");
    });

    test("speculative generate (prompt lookup, draft model) streams the same greedy text", () -> {
      try (LesContext ctx = new LesContext(model)) {
        GenerateParams d = new GenerateParams();
        checkEq(0, d.lookupNgram, "default lookupNgram");
        checkEq(8, d.draftMax, "default draftMax");
        checkEq(0, d.draftMin, "default draftMin");
        check(d.draftModel == null, "default draftModel");
        GenerateParams p = GenerateParams.greedy(greedyIds.length);
        p.ignoreEos = true;
        p.lookupNgram = 3;
        p.draftMin = 1;
        StringBuilder text = new StringBuilder();
        GenerateStats stats = ctx.generate(prompt, p, (token, piece) -> {
          text.append(piece);
          return true;
        });
        checkEq(greedyText, text.toString(), "lookup: generated text");
        check(stats.nTargetPasses > 0, "lookup: target passes: " + stats.nTargetPasses);
        checkEq(stats.nDecoded, stats.nPassTokens, "lookup: every decoded token came from a target pass");
        check(stats.unionBytes > 0, "lookup: union bytes");
      }
      try (LesContext ctx = new LesContext(model)) {
        // The model drafting for itself: the same vocabulary, every draft accepted.
        GenerateParams p = GenerateParams.greedy(greedyIds.length);
        p.ignoreEos = true;
        p.draftModel = model;
        p.draftMax = 3;
        p.draftMin = 3;
        StringBuilder text = new StringBuilder();
        GenerateStats stats = ctx.generate(prompt, p, (token, piece) -> {
          text.append(piece);
          return true;
        });
        checkEq(greedyText, text.toString(), "draft model: generated text");
        check(stats.nVerifyPasses > 0, "draft model: verify passes");
        checkEq(stats.nDraftVerified, stats.nDraftAccepted, "draft model = target: every draft accepted");
        check(stats.tokensPerTargetPass() > 1.0, "draft model: tokens per target pass " + stats.tokensPerTargetPass());
        GenerateParams bad = GenerateParams.greedy(4);
        bad.lookupNgram = 2;
        bad.draftMax = 0;
        LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(prompt, bad, null));
        check(e.getMessage().contains("draft_max"), "message names draft_max: " + e.getMessage());
        check(!new GenerateParams().mtp, "default mtp");
        GenerateParams noHead = GenerateParams.greedy(4);
        noHead.mtp = true;  // this model has no MTP block
        LesException u = expectLes(LesException.UNSUPPORTED, () -> ctx.generate(prompt, noHead, null));
        check(u.getMessage().contains("no MTP"), "message says the model has no MTP head: " + u.getMessage());
      }
    });

    test("greedy generate streams llama.cpp's text and ids", () -> {
      try (LesContext ctx = new LesContext(model)) {
        StringBuilder text = new StringBuilder();
        List<Integer> ids = new ArrayList<>();
        GenerateParams p = GenerateParams.greedy(greedyIds.length);
        p.ignoreEos = true;
        GenerateStats stats = ctx.generate(prompt, p, (token, piece) -> {
          ids.add(token);
          text.append(piece);
          return true;
        });
        checkEq(greedyText, text.toString(), "generated text");
        checkEq(Arrays.toString(greedyIds), ids.toString(), "generated ids");
        checkEq(promptTokens.length, stats.nPromptTokens, "stats.nPromptTokens");
        checkEq(greedyIds.length, stats.nGenerated, "stats.nGenerated");
        checkEq(greedyIds.length - 1, stats.nDecoded, "stats.nDecoded");
        checkEq("n_predict", stats.stopReason, "stats.stopReason");
        check(stats.decodeTokensPerSecond > 0, "decode tok/s > 0: " + stats);
        // A context is a conversation: it holds the prompt and every delivered token (the last one pending).
        checkEq(promptTokens.length + greedyIds.length, ctx.nPast(), "context holds prompt + generated");
        System.out.println("  " + stats);
      }
    });

    test("decode + logits: argmax is llama.cpp's first greedy token; trim and reset", () -> {
      try (LesContext ctx = new LesContext(model)) {
        check(ctx.logits() == null, "no logits before decode");
        ctx.decode(promptTokens);
        float[] logits = ctx.logits();
        checkEq(model.nVocab(), logits.length, "logits length");
        int best = 0;
        for (int i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
        checkEq(greedyIds[0], best, "argmax");
        ctx.decode(best);
        checkEq(promptTokens.length + 1, ctx.nPast(), "n_past after decode");
        ctx.trim(promptTokens.length);
        checkEq(promptTokens.length, ctx.nPast(), "n_past after trim");
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.trim(ctx.nPast() + 1));
        ctx.reset();
        checkEq(0, ctx.nPast(), "n_past after reset");
        check(ctx.logits() == null, "no logits after reset");
      }
    });

    test("stop: listener returning false ends generate normally", () -> {
      try (LesContext ctx = new LesContext(model)) {
        AtomicInteger count = new AtomicInteger();
        GenerateParams p = GenerateParams.greedy(20);
        p.ignoreEos = true;
        GenerateStats stats = ctx.generate(prompt, p, (token, piece) -> count.incrementAndGet() < 3);
        checkEq(3, count.get(), "tokens delivered");
        checkEq(3, stats.nGenerated, "stats.nGenerated");
        checkEq("cancelled", stats.stopReason, "stats.stopReason");
      }
    });

    test("cancel() from another thread stops generate with CANCELLED", () -> {
      try (LesContext ctx = new LesContext(model)) {
        AtomicInteger count = new AtomicInteger();
        GenerateParams p = GenerateParams.greedy(greedyIds.length);
        p.ignoreEos = true;
        expectLes(LesException.CANCELLED, () -> ctx.generate(prompt, p, (token, piece) -> {
          if (count.incrementAndGet() == 2) {
            // Cancel on another thread and wait for it, so the next token sees the request.
            Thread canceller = new Thread(ctx::cancel, "canceller");
            canceller.start();
            try {
              canceller.join();
            } catch (InterruptedException e) {
              throw new RuntimeException(e);
            }
          }
          return true;
        }));
        checkEq(2, count.get(), "tokens delivered before the cancel took effect");
        // The context stays usable: a new generate starts with the cancel flag cleared.
        GenerateStats stats = ctx.generate(" and", GenerateParams.greedy(2), null);
        checkEq(2, stats.nGenerated, "generate after cancel");
      }
    });

    test("experts streamed through a 4 MiB cache give llama.cpp's text; bad settings throw", () -> {
      ContextParams cp = new ContextParams().expertBudgetBytes(4L << 20);
      cp.ioBackend = ContextParams.IO_PREAD;
      try (LesContext ctx = new LesContext(model, cp)) {
        StringBuilder text = new StringBuilder();
        GenerateParams p = GenerateParams.greedy(greedyIds.length);
        p.ignoreEos = true;
        ctx.generate(prompt, p, (token, piece) -> {
          text.append(piece);
          return true;
        });
        checkEq(greedyText, text.toString(), "streamed text");
      }
      LesException e = expectLes(LesException.INVALID_ARGUMENT,
          () -> new LesContext(model, new ContextParams().expertBudgetBytes(4096)).close());
      check(e.getMessage().contains("minimum"), "below the minimum: " + e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT,
          () -> new LesContext(model, new ContextParams().expertBudgetBytes(-1)).close());
      ContextParams badIo = new ContextParams().expertBudgetBytes(4L << 20);
      badIo.ioBackend = 42;
      expectLes(LesException.INVALID_ARGUMENT, () -> new LesContext(model, badIo).close());
    });

    test("context full: CONTEXT_FULL after delivering what fit", () -> {
      ContextParams cp = new ContextParams().nCtx(promptTokens.length + 4);
      try (LesContext ctx = new LesContext(model, cp)) {
        checkEq(promptTokens.length + 4, ctx.nCtx(), "n_ctx");
        AtomicInteger count = new AtomicInteger();
        GenerateParams p = GenerateParams.greedy(greedyIds.length);
        p.ignoreEos = true;
        expectLes(LesException.CONTEXT_FULL, () -> ctx.generate(prompt, p, (t, s) -> count.incrementAndGet() > 0));
        check(count.get() >= 1 && count.get() <= 5, "delivered " + count.get() + " tokens");
      }
    });

    test("bad use: out-of-range tokens, null arguments, re-entrant calls", () -> {
      final int nVocab = model.nVocab();
      try (LesContext ctx = new LesContext(model)) {
        LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> ctx.decode(nVocab));
        System.out.println("  out-of-range decode: " + e.getMessage());
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.decode(-1));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.decode(new int[0]));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.decode((int[]) null));
        checkEq(0, ctx.nPast(), "nothing appended by failed decodes");
        expectLes(LesException.INVALID_ARGUMENT, () -> model.tokenBytes(nVocab));
        expectLes(LesException.INVALID_ARGUMENT, () -> model.detokenize(new int[] {1, -5}));
        expectLes(LesException.INVALID_ARGUMENT, () -> model.tokenize(null));
        expectLes(LesException.INVALID_ARGUMENT, () -> model.detokenize(null));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate((String) null, new GenerateParams(), null));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(prompt, null, null));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate("a\0b", new GenerateParams(), null));
        expectLes(LesException.INVALID_ARGUMENT, () -> new LesContext(null));
        GenerateParams badStop = GenerateParams.greedy(2);
        badStop.stop = new String[] {"ok", null};
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(prompt, badStop, null));
        // A call on the context from inside its own listener is refused, not raced.
        List<LesException> inner = new ArrayList<>();
        ctx.generate(prompt, GenerateParams.greedy(1), (t, s) -> {
          try {
            ctx.nPast();
          } catch (LesException ex) {
            inner.add(ex);
          }
          return true;
        });
        checkEq(1, inner.size(), "re-entrant call refused");
        // A listener's exception propagates unchanged.
        IllegalStateException boom = new IllegalStateException("boom");
        try {
          ctx.generate(prompt, GenerateParams.greedy(4), (t, s) -> {
            throw boom;
          });
          throw new AssertionError("listener exception swallowed");
        } catch (IllegalStateException ex) {
          check(ex == boom, "same exception");
        }
      }
    });

    test("close() inside the listener: generate ends CANCELLED and the context is freed", () -> {
      LesContext ctx = new LesContext(model);
      GenerateParams p = GenerateParams.greedy(16);
      p.ignoreEos = true;
      AtomicInteger count = new AtomicInteger();
      expectLes(LesException.CANCELLED, () -> ctx.generate(prompt, p, (t, s) -> {
        count.incrementAndGet();
        ctx.close();
        return true;
      }));
      checkEq(1, count.get(), "tokens delivered");
      check(ctx.isClosed(), "closed");
      expectLes(LesException.INVALID_ARGUMENT, ctx::nPast);
      ctx.close();  // idempotent
    });

    test("closed context and closed model throw; contexts outlive their model", () -> {
      LesContext ctx = new LesContext(model);
      ctx.close();
      LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> ctx.decode(promptTokens));
      check(e.getMessage().contains("closed"), e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(prompt, new GenerateParams(), null));
      ctx.cancel();  // a no-op, not a crash

      LesModel second = LesModel.load(modelPath, 2);
      LesContext survivor = new LesContext(second);
      second.close();
      second.close();  // idempotent
      check(second.isClosed(), "closed");
      expectLes(LesException.INVALID_ARGUMENT, second::nVocab);
      expectLes(LesException.INVALID_ARGUMENT, () -> second.tokenize(prompt));
      expectLes(LesException.INVALID_ARGUMENT, () -> new LesContext(second));
      StringBuilder text = new StringBuilder();
      GenerateParams p = GenerateParams.greedy(greedyIds.length);
      p.ignoreEos = true;
      survivor.generate(prompt, p, (t, s) -> text.append(s) != null);
      checkEq(greedyText, text.toString(), "generation after the model was closed");
      survivor.close();
    });
  }

  private static void runWithoutModel() {
    test("load errors: missing file is IO, null path is INVALID_ARGUMENT", () -> {
      LesException e = expectLes(LesException.IO, () -> LesModel.load("/nonexistent/model.gguf"));
      check(e.getMessage().contains("/nonexistent/model.gguf"), "message names the file: " + e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT, () -> LesModel.load(null));
    });
  }
}
