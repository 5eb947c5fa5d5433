"""The OpenAI Python SDK (openai, pinned in requirements-openai.txt) against `les serve`.

Started by run_openai_sdk_test.sh with the SDK installed in a virtual environment:
    python openai_sdk_test.py LES_BINARY MODEL
Starts `les serve -m MODEL --port 0 --api-key KEY` itself, reads the port from
its "listening on" line, and checks through the SDK: models.list;
chat.completions whole and with stream=True and stream_options include_usage
(the same text as `les run --chat`, the same usage); completions (as `les run`);
stop; max_tokens; seed; a wrong API key raising AuthenticationError; bad
requests raising BadRequestError carrying LES's message; a client that closes a
stream early, then a next request that works. unittest: exit 0 when all pass.
"""
import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import urllib.request

import openai

LES, MODEL = sys.argv[1], sys.argv[2]
KEY = "les-sdk-test-key"
MODEL_ID = os.path.splitext(os.path.basename(MODEL))[0]
QUESTION = "Who is Emily?"


def les_run(*args):
    """`les run` on the same model: (text, prompt tokens, generated tokens)."""
    r = subprocess.run([LES, "run", "-m", MODEL, "-t", "1", *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    prompt = int(re.search(r"prompt tokens (\d+)", r.stderr).group(1))
    generated = int(re.search(r"generated (\d+)", r.stderr).group(1))
    return r.stdout, prompt, generated


class Server:
    """`les serve` on a free loopback port, with an API key; its stderr collected."""

    def __init__(self):
        self.proc = subprocess.Popen([LES, "serve", "-m", MODEL, "--port", "0", "-t", "1", "--api-key", KEY],
                                     stderr=subprocess.PIPE, text=True)
        self.log = []
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"les serve: listening on http://127\.0\.0\.1:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(180) or self.port is None:
            self.stop()
            raise RuntimeError("les serve did not start:\n" + "".join(self.log))
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self.proc.returncode


class OpenAISDKTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key=KEY, max_retries=0, timeout=300)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, "les serve exit code %s:\n%s" % (code, "".join(cls.server.log))

    def chat(self, **kw):
        args = dict(model=MODEL_ID, messages=[{"role": "user", "content": QUESTION}], temperature=0)
        args.update(kw)
        return self.client.chat.completions.create(**args)

    def test_models_list(self):
        models = self.client.models.list()
        self.assertEqual([m.id for m in models.data], [MODEL_ID])
        self.assertEqual(models.data[0].object, "model")
        self.assertEqual(self.client.models.retrieve(MODEL_ID).id, MODEL_ID)
        with self.assertRaises(openai.NotFoundError) as e:
            self.client.models.retrieve("no-such-model")
        self.assertEqual(e.exception.body["code"], "model_not_found")
        self.assertIn("no-such-model", e.exception.message)

    def test_chat_whole_and_streamed_equal_les_run(self):
        text, prompt, generated = les_run("--chat", "--temp", "0", "-n", "30", "-p", QUESTION)
        self.assertTrue(text)
        whole = self.chat(max_tokens=30)
        self.assertTrue(whole.id.startswith("chatcmpl-"))
        self.assertEqual(whole.object, "chat.completion")
        self.assertEqual(whole.model, MODEL_ID)
        choice = whole.choices[0]
        self.assertEqual(choice.message.role, "assistant")
        self.assertEqual(choice.message.content, text)
        self.assertEqual(choice.finish_reason, "length" if generated == 30 else "stop")
        self.assertEqual((whole.usage.prompt_tokens, whole.usage.completion_tokens, whole.usage.total_tokens),
                         (prompt, generated, prompt + generated))

        stream = self.chat(max_tokens=30, stream=True, stream_options={"include_usage": True})
        parts, finish, usage, ids = [], None, None, set()
        for chunk in stream:
            ids.add(chunk.id)
            self.assertEqual(chunk.object, "chat.completion.chunk")
            if chunk.usage is not None:
                self.assertEqual(chunk.choices, [], "the usage chunk has no choices")
                usage = chunk.usage
                continue
            self.assertIsNone(chunk.usage)
            delta = chunk.choices[0].delta
            if delta.content:
                parts.append(delta.content)
            if chunk.choices[0].finish_reason:
                finish = chunk.choices[0].finish_reason
        self.assertEqual(len(ids), 1, "one id for every chunk")
        self.assertEqual("".join(parts), text)
        self.assertEqual(finish, choice.finish_reason)
        self.assertIsNotNone(usage, "stream_options include_usage: a last chunk with usage")
        self.assertEqual((usage.prompt_tokens, usage.completion_tokens, usage.total_tokens),
                         (prompt, generated, prompt + generated))
        # Without include_usage no chunk carries usage.
        plain = list(self.chat(max_tokens=4, stream=True))
        self.assertTrue(all(c.usage is None for c in plain))

    def test_completions_equal_les_run(self):
        prompt_text = "CHAPTER XII.\nIn the year 1794, Emily"
        text, prompt, generated = les_run("--temp", "0", "-n", "16", "-p", prompt_text)
        c = self.client.completions.create(model=MODEL_ID, prompt=prompt_text, max_tokens=16, temperature=0)
        self.assertEqual(c.object, "text_completion")
        self.assertEqual(c.choices[0].text, text)
        self.assertEqual((c.usage.prompt_tokens, c.usage.completion_tokens), (prompt, generated))
        streamed = self.client.completions.create(model=MODEL_ID, prompt=prompt_text, max_tokens=16, temperature=0,
                                                  stream=True)
        self.assertEqual("".join(ch.choices[0].text for ch in streamed if ch.choices), text)

    def test_stop_and_max_tokens(self):
        full = self.chat(max_tokens=30).choices[0].message.content
        stop = full[len(full) // 2:len(full) // 2 + 4]
        cut = self.chat(max_tokens=30, stop=[stop])
        self.assertEqual(cut.choices[0].message.content, full[:full.index(stop)])
        self.assertEqual(cut.choices[0].finish_reason, "stop")
        short = self.chat(max_tokens=5)
        self.assertEqual(short.usage.completion_tokens, 5)
        self.assertEqual(short.choices[0].finish_reason, "length")
        self.assertTrue(full.startswith(short.choices[0].message.content))

    def test_seed(self):
        def sample(seed):
            return self.chat(max_tokens=20, temperature=0.9, seed=seed).choices[0].message.content

        first = sample(7)
        self.assertEqual(sample(7), first, "the same seed gives the same text")
        self.assertTrue(any(sample(s) != first for s in (8, 9, 10)), "other seeds give other texts")

    def test_wrong_api_key(self):
        wrong = openai.OpenAI(base_url=self.server.base_url, api_key="not-the-key", max_retries=0)
        with self.assertRaises(openai.AuthenticationError) as e:
            wrong.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": "hi"}])
        self.assertEqual(e.exception.status_code, 401)
        self.assertIn("API key", e.exception.message)
        with self.assertRaises(openai.AuthenticationError):
            wrong.models.list()

    def test_bad_requests_carry_les_message(self):
        cases = [
            (dict(temperature=-1), "temperature"),
            (dict(max_tokens=-5), "max_tokens"),
            (dict(messages=[]), "messages"),
            (dict(messages=[{"role": "wizard", "content": "hi"}]), "wizard"),
            (dict(top_p=7), "top_p"),
        ]
        for kw, named in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(openai.BadRequestError) as e:
                    self.chat(**kw)
                body = e.exception.body
                self.assertIsInstance(body, dict, e.exception)
                self.assertIn(named, body["message"], body)
                self.assertIn(body["message"], e.exception.message)
                self.assertEqual(e.exception.status_code, 400)
        with self.assertRaises(openai.BadRequestError) as e:
            self.client.completions.create(model=MODEL_ID, prompt="x", max_tokens=2, stream_options={"include_usage": 1})
        self.assertIn("include_usage", e.exception.body["message"])

    def test_client_closes_a_stream_then_a_next_request_works(self):
        stream = self.chat(max_tokens=2000, stream=True)
        got = 0
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                got += 1
            if got == 3:
                break
        stream.close()
        self.assertEqual(got, 3)
        after = self.chat(max_tokens=8)
        self.assertEqual(after.usage.completion_tokens, 8)
        # The abandoned generation stopped: the server is idle again.
        for _ in range(100):
            with urllib.request.urlopen(f"http://127.0.0.1:{self.server.port}/health", timeout=30) as r:
                health = json.load(r)
            if health["requests"]["running"] == 0:
                break
            time.sleep(0.1)
        self.assertEqual(health["requests"], {"running": 0, "waiting": 0, "max_waiting": 16})


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
