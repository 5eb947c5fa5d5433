package org.les.test;

import static org.les.test.JniTest.check;
import static org.les.test.JniTest.checkEq;
import static org.les.test.JniTest.expectLes;
import static org.les.test.JniTest.test;

import java.io.File;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.les.ChatMessage;
import org.les.ChatTemplate;
import org.les.ContextParams;
import org.les.GenerateParams;
import org.les.GenerateStats;
import org.les.LesContext;
import org.les.LesException;
import org.les.LesModel;
import org.les.LesSampler;
import org.les.MemoryPlan;
import org.les.ModelParams;
import org.les.StreamLayerStats;
import org.les.StreamStats;

/**
 * The parts of les.h the JNI binding gained for apps (issue 18): expert budget changed from another
 * thread during generate(), streaming statistics, the memory plan (with a draft model counted in
 * the limit: MemoryPlan.draftBytes against the C API's, PlanProbe), chat templates, session
 * save/restore (bytes and file), the context's tokens, all-token logits, the sampler on its own,
 * model parameters and the draft check. Run by JniTest.main on the trained fixture model; the
 * expected texts are llama.cpp's greedy continuation (JniTest's arguments).
 */
final class JniApiTest {
  private JniApiTest() {}

  private static StringBuilder collectInto(LesContext ctx, String prompt, GenerateParams p) {
    StringBuilder text = new StringBuilder();
    ctx.generate(prompt, p, (t, s) -> text.append(s) != null);
    return text;
  }

  /** The smallest expert budget, read from the message of a refused one ("minimum N bytes"). */
  private static long minBudget(LesContext ctx) throws Exception {
    LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> ctx.setExpertBudget(1));
    Matcher m = Pattern.compile("minimum ([0-9]+) bytes").matcher(e.getMessage());
    check(m.find(), "message names the minimum: " + e.getMessage());
    return Long.parseLong(m.group(1));
  }

  static void run(LesModel model, String modelPath, String prompt, String greedyText, int nGreedy) {
    test("setExpertBudget from another thread during generate keeps llama.cpp's text; stats", () -> {
      ContextParams cp = new ContextParams().expertBudgetBytes(4L << 20);
      cp.ioBackend = ContextParams.IO_PREAD;
      try (LesContext ctx = new LesContext(model, cp)) {
        long lo = minBudget(ctx);
        long hi = 3 * lo;
        ctx.setExpertBudget(lo);
        int slotsLo = ctx.streamStats().nSlots;
        check(slotsLo >= 1, "slots at the minimum: " + slotsLo);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger flips = new AtomicInteger();
        AtomicReference<Throwable> flipError = new AtomicReference<>();
        Thread flipper = new Thread(() -> {
          try {
            boolean low = false;
            while (!stop.get()) {
              long b = low ? lo : hi;
              ctx.setExpertBudget(b);
              StreamStats s = ctx.streamStats();  // the budget is in effect when the call returns
              if (s.budgetBytes != b) throw new AssertionError("budget " + s.budgetBytes + " after set " + b);
              flips.incrementAndGet();
              low = !low;
              Thread.sleep(0, 300_000);
            }
          } catch (Throwable t) {
            flipError.set(t);
          }
        }, "budget-flipper");
        GenerateParams p = GenerateParams.greedy(nGreedy);
        p.ignoreEos = true;
        AtomicInteger seenDuring = new AtomicInteger();
        StringBuilder text = new StringBuilder();
        flipper.start();
        try {
          ctx.generate(prompt, p, (t, s) -> {
            if (flips.get() > 0) seenDuring.incrementAndGet();
            return text.append(s) != null;
          });
        } finally {
          stop.set(true);
          flipper.join();
        }
        if (flipError.get() != null) throw new AssertionError("flipper thread failed", flipError.get());
        checkEq(greedyText, text.toString(), "streamed text under budget changes");
        check(flips.get() > 0 && seenDuring.get() > 0, "budget changed during generate: " + flips.get() + " flips");
        StreamStats s = ctx.streamStats();
        System.out.println("  " + flips.get() + " budget changes; " + s);
        check(s.tokens > 0 && s.bytesRead > 0 && s.readsIssued > 0, "streamed bytes counted");
        checkEq(0L, s.readErrors, "read errors");
        check(s.cacheHits + s.inflightHits + s.cacheMisses > 0, "selected experts counted");
        check(s.hitRate >= 0 && s.hitRate <= 1 && s.meanRecall >= 0 && s.meanRecall <= 1, "rates in [0, 1]");
        check(s.oneTokenBudgetBytes > 0 && s.wallSeconds > 0, "one-token budget and wall time");
        StreamLayerStats l1 = ctx.streamLayerStats(1);
        check(l1.recall >= 0 && l1.recall <= 1 && l1.precision >= 0 && l1.precision <= 1, "layer 1 recall/precision");
        check(l1.cacheHits + l1.inflightHits + l1.cacheMisses > 0, "layer 1 selected experts");
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.streamLayerStats(model.nLayer()));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.streamLayerStats(-1));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.setExpertBudget(-5));
        checkEq(0L, ctx.memoryPlan().limitBytes, "no memory limit: empty plan");
      }
      try (LesContext resident = new LesContext(model)) {
        LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> resident.setExpertBudget(8L << 20));
        System.out.println("  resident setExpertBudget: " + e.getMessage());
        expectLes(LesException.INVALID_ARGUMENT, resident::streamStats);
      }
      LesContext closed = new LesContext(model, new ContextParams().expertBudgetBytes(4L << 20));
      closed.close();
      expectLes(LesException.INVALID_ARGUMENT, () -> closed.setExpertBudget(4L << 20));
      expectLes(LesException.INVALID_ARGUMENT, closed::streamStats);
    });

    test("memory limit: the plan reports the split; an impossible limit names the arithmetic", () -> {
      try (LesContext ctx = new LesContext(model, new ContextParams().nCtx(256).memoryLimitBytes(2L << 30))) {
        MemoryPlan plan = ctx.memoryPlan();
        checkEq(2L << 30, plan.limitBytes, "limit");
        check(plan.baselineBytes > 0 && plan.denseBytes > 0 && plan.kvBytes > 0, "parts of the plan");
        check(plan.resident, "2 GiB holds the 35 MiB model resident");
        checkEq(256, plan.nCtx, "plan n_ctx");
      }
      LesException e = expectLes(LesException.INVALID_ARGUMENT,
          () -> new LesContext(model, new ContextParams().memoryLimitBytes(1L << 20)).close());
      check(e.getMessage().contains("MiB"), "message gives the arithmetic: " + e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT, () -> new LesContext(model, new ContextParams().memoryLimitBytes(-1)));
    });

    test("memory limit with a draft model: draftBytes as the C API counts it; a closed draft is refused", () -> {
      // The Q4_K_M file next to the model: same vocabulary, a real draft model for it.
      String draftPath = new File(new File(modelPath).getParentFile(), "tiny-qwen3moe-Q4_K_M.gguf").getPath();
      final long limit = 2L << 30;
      ContextParams cp = new ContextParams().nCtx(256).memoryLimitBytes(limit);
      LesModel draft = LesModel.load(draftPath, 2);
      try {
        cp.draftModel(draft);
        long draftBytes;
        try (LesContext ctx = new LesContext(model, cp)) {
          MemoryPlan plan = ctx.memoryPlan();
          draftBytes = plan.draftBytes;
          check(draftBytes > 0, "draftBytes " + draftBytes);
          checkEq(0L, plan.visionBytes, "no vision encoder");
          check(plan.resident, "2 GiB holds both models resident");
          long sum = plan.baselineBytes + plan.draftBytes + plan.denseBytes + plan.kvBytes + plan.scratchBytes
              + plan.routedBytes;
          check(sum <= limit, "parts " + sum + " within the limit");
        }
        long[] c = PlanProbe.cApiShares(modelPath, 256, limit, 2, draftPath, null);
        if (c != null) {
          checkEq(c[0], draftBytes, "draftBytes: the C API's for the same parameters");
          checkEq(0L, c[1], "C API vision_bytes");
        }
        // A draft model changes nothing without a limit; none counts nothing.
        try (LesContext ctx = new LesContext(model, new ContextParams().nCtx(256).memoryLimitBytes(limit))) {
          checkEq(0L, ctx.memoryPlan().draftBytes, "no draft model: draftBytes 0");
        }
        // A closed draft model is refused naming the field; the same params work again with an open one.
        LesModel closedDraft = LesModel.load(draftPath, 2);
        closedDraft.close();
        cp.draftModel = closedDraft;
        LesException e = expectLes(LesException.INVALID_ARGUMENT, () -> new LesContext(model, cp).close());
        check(e.getMessage().contains("ContextParams.draftModel") && e.getMessage().contains("closed"),
            "message names the field: " + e.getMessage());
        cp.draftModel = draft;
        try (LesContext ctx = new LesContext(model, cp)) {
          checkEq(draftBytes, ctx.memoryPlan().draftBytes, "params usable after the refusal");
          draft.close();  // borrowed for creation only: the context does not need it afterwards
          checkEq(draftBytes, ctx.memoryPlan().draftBytes, "plan after the draft model closed");
          String text = collectInto(ctx, prompt, GenerateParams.greedy(8)).toString();
          check(!text.isEmpty() && greedyText.startsWith(text), "llama.cpp's text begins with " + text);
        }
      } finally {
        draft.close();
      }
      // close() from another thread while the constructor may hold the draft model: either the
      // context is created (the model freed after the call) or creation is refused naming the field.
      int created = 0;
      for (int i = 0; i < 8; i++) {
        LesModel racing = LesModel.load(draftPath, 2);
        Thread closer = new Thread(racing::close);
        closer.start();
        try (LesContext ctx = new LesContext(model, new ContextParams().nCtx(256).memoryLimitBytes(limit)
            .draftModel(racing))) {
          check(ctx.memoryPlan().draftBytes > 0, "draftBytes with a model closed concurrently");
          created++;
        } catch (LesException e) {
          check(e.getMessage().contains("ContextParams.draftModel"), "refusal names the field: " + e.getMessage());
        }
        closer.join();
        check(racing.isClosed(), "closed");
      }
      System.out.println("  concurrent close(): " + created + " of 8 contexts created, the others refused");
    });

    test("chat: template names, rendering, generation from a chat prompt", () -> {
      List<String> names = Arrays.asList(LesModel.chatTemplateNames());
      check(names.contains("chatml") && names.contains("llama3") && names.contains("qwen"), "names " + names);
      ChatTemplate own = model.chatTemplate(null);
      checkEq("chatml", own.name, "a model without a template gets chatml");
      checkEq(ChatTemplate.SOURCE_FALLBACK, own.source, "fallback source");
      checkEq(ChatTemplate.SOURCE_NAMED, model.chatTemplate("qwen").source, "named source");
      checkEq("chatml", model.chatTemplate("qwen").name, "alias resolves");
      List<ChatMessage> msgs = Arrays.asList(ChatMessage.system("Be brief."), ChatMessage.user("Hi"));
      checkEq("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
          model.applyChatTemplate(null, msgs, true), "chatml rendering");
      check(model.applyChatTemplate("llama3", msgs, false).startsWith("<|start_header_id|>system<|end_header_id|>"),
          "llama3 rendering");
      LesException e = expectLes(LesException.INVALID_ARGUMENT,
          () -> model.applyChatTemplate("no-such-family", msgs, true));
      check(e.getMessage().contains("no-such-family"), "unknown name named: " + e.getMessage());
      expectLes(LesException.INVALID_ARGUMENT, () -> model.applyChatTemplate(null, null, true));
      expectLes(LesException.INVALID_ARGUMENT,
          () -> model.applyChatTemplate(null, Arrays.asList(new ChatMessage("user", null)), true));
      try (LesContext ctx = new LesContext(model)) {
        GenerateParams p = GenerateParams.greedy(8);
        p.parseSpecial = true;
        p.ignoreEos = true;
        GenerateStats stats = ctx.generate(model.applyChatTemplate(null, msgs, true), p, null);
        checkEq(8, stats.nGenerated, "tokens generated from the chat prompt");
      }
    });

    test("session: save/restore through bytes and a file continues with llama.cpp's text", () -> {
      int half = nGreedy / 2;
      GenerateParams first = GenerateParams.greedy(half);
      first.ignoreEos = true;
      GenerateParams rest = GenerateParams.greedy(nGreedy - half);
      rest.ignoreEos = true;
      File file = File.createTempFile("les-jni-session", ".lesstate");
      file.deleteOnExit();
      byte[] state;
      int[] held;
      String head;
      try (LesContext ctx = new LesContext(model)) {
        head = collectInto(ctx, prompt, first).toString();
        held = ctx.tokens();
        checkEq(ctx.nPast(), held.length, "tokens() holds nPast() ids");
        state = ctx.saveState();
        checkEq((long) state.length, ctx.stateSize(), "stateSize() is saveState()'s length");
        ctx.saveStateFile(file.getPath());
      }
      for (int round = 0; round < 2; round++) {
        try (LesContext ctx = new LesContext(model)) {
          if (round == 0) ctx.loadState(state); else ctx.loadStateFile(file.getPath());
          checkEq(Arrays.toString(held), Arrays.toString(ctx.tokens()), "tokens after restore " + round);
          // generate() with an empty prompt continues the conversation.
          String tail = collectInto(ctx, "", rest).toString();
          checkEq(greedyText, head + tail, "text across the restore (round " + round + ")");
        }
      }
      try (LesContext ctx = new LesContext(model)) {
        byte[] cut = Arrays.copyOf(state, state.length / 2);
        expectLes(LesException.FORMAT, () -> ctx.loadState(cut));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.loadState(null));
        LesException e = expectLes(LesException.IO, () -> ctx.loadStateFile("/nonexistent/x.lesstate"));
        check(e.getMessage().contains("/nonexistent/x.lesstate"), "IO names the path: " + e.getMessage());
        checkEq(0, ctx.nPast(), "failed restores change nothing");
        expectLes(LesException.CONTEXT_FULL, () -> {
          try (LesContext small = new LesContext(model, new ContextParams().nCtx(4))) {
            small.loadState(state);
          }
        });
      }
    });

    test("token prompt, all-token logits and the sampler on its own reproduce greedy decoding", () -> {
      int[] promptIds = model.tokenize(prompt);
      int[] greedyIds = model.tokenize(greedyText, false, false);
      try (LesContext ctx = new LesContext(model); LesSampler sampler = new LesSampler(GenerateParams.greedy(1))) {
        StringBuilder text = new StringBuilder();
        GenerateParams p = GenerateParams.greedy(nGreedy);
        p.ignoreEos = true;
        p.seed = 1234;
        GenerateStats stats = ctx.generate(promptIds, p, (t, s) -> text.append(s) != null);
        checkEq(greedyText, text.toString(), "generate from token ids");
        checkEq(1234L, stats.seed, "stats.seed reports the seed");
        ctx.reset();
        ctx.decodeAllLogits(promptIds);
        float[] last = ctx.logits(-1);
        checkEq(Arrays.toString(ctx.logits()), Arrays.toString(last), "logits(-1) = logits()");
        check(ctx.logits(0) != null && ctx.logits(promptIds.length) == null, "logits(i) range");
        int tok = sampler.sample(last);
        checkEq(model.detokenize(new int[] {tok}), greedyText.substring(0, model.detokenize(new int[] {tok}).length()),
            "the sampler's greedy token starts llama.cpp's text");
        sampler.accept(tok);
        sampler.reset();
        expectLes(LesException.INVALID_ARGUMENT, () -> sampler.sample(new float[0]));
        expectLes(LesException.INVALID_ARGUMENT, () -> sampler.sample(null));
        expectLes(LesException.INVALID_ARGUMENT, () -> sampler.accept(-1));
        expectLes(LesException.INVALID_ARGUMENT, () -> ctx.generate(new int[0], p, null));
        check(greedyIds.length > 0, "greedy text tokenizes");
      }
      GenerateParams bad = GenerateParams.greedy(1);
      bad.topP = 2.0f;
      expectLes(LesException.INVALID_ARGUMENT, () -> new LesSampler(bad).close());
      try (LesSampler random = new LesSampler(new GenerateParams())) {
        check(random.seed() != GenerateParams.SEED_RANDOM, "a drawn seed is reported");
      }
      LesSampler closed = new LesSampler(GenerateParams.greedy(1));
      closed.close();
      expectLes(LesException.INVALID_ARGUMENT, closed::seed);
    });

    test("a cancel while no generate() runs stays pending for the next one", () -> {
      try (LesContext ctx = new LesContext(model)) {
        ctx.cancel();
        AtomicInteger delivered = new AtomicInteger();
        expectLes(LesException.CANCELLED, () -> ctx.generate(prompt, GenerateParams.greedy(4), (t, s) -> {
          delivered.incrementAndGet();
          return true;
        }));
        checkEq(0, delivered.get(), "no token delivered after a pending cancel");
        checkEq(4, ctx.generate(prompt, GenerateParams.greedy(4), null).nGenerated, "the next generate runs");
      }
    });

    test("model parameters, version, draft check", () -> {
      check(LesModel.versionAtLeast(0, 1) && !LesModel.versionAtLeast(99, 0), "versionAtLeast");
      check(LesModel.maxThreads() >= 4, "maxThreads " + LesModel.maxThreads());
      try (LesModel read = LesModel.load(modelPath, new ModelParams().nThreads(2).weights(ModelParams.WEIGHTS_READ))) {
        model.checkDraft(read);
        try (LesContext ctx = new LesContext(read)) {
          GenerateParams p = GenerateParams.greedy(nGreedy);
          p.ignoreEos = true;
          checkEq(greedyText, collectInto(ctx, prompt, p).toString(), "WEIGHTS_READ text");
        }
      }
      expectLes(LesException.INVALID_ARGUMENT, () -> LesModel.load(modelPath, new ModelParams().weights(7)));
      ModelParams badLog = new ModelParams();
      badLog.logLevel = 9;
      expectLes(LesException.INVALID_ARGUMENT, () -> LesModel.load(modelPath, badLog));
      expectLes(LesException.INVALID_ARGUMENT,
          () -> LesModel.load(modelPath, new ModelParams().nThreads(LesModel.maxThreads() + 1)));
      expectLes(LesException.INVALID_ARGUMENT, () -> model.checkDraft(null));
    });
  }
}
