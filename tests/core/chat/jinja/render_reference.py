#!/usr/bin/env python3
"""Chat templates rendered by Jinja2 as Hugging Face transformers renders them.

transformers' apply_chat_template compiles a template in an
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
loopcontrols extension and a `{% generation %}` block, replaces the tojson
filter with json.dumps(x, ensure_ascii=False, indent=..., separators=...,
sort_keys=...), adds the globals raise_exception(message) and
strftime_now(format), and renders with messages, tools, documents,
add_generation_prompt, the special tokens and extra keyword arguments. This
script builds the same environment (written for LES's tests; transformers is
not needed) with a fixed clock.

Modes:
  --write           render every templates/*.jinja on conversations.json and
                    every snippet of snippets.json; write expected/<template>.json
                    and expected/snippets.json (the committed expectations the
                    C++ tests test_jinja_templates / test_jinja_snippets compare LES with)
  --check           render live and compare with the committed expectations
  --les BINARY      render live and compare with LES (BINARY is the
                    jinja_render test helper): the templates on the
                    conversations, each also with add_generation_prompt
                    flipped, and the snippets
  --table           with --les: print the template table (identical / refused)
Exit status: 0 all equal, 1 a difference (printed), 77 when jinja2 is missing.
"""
import argparse
import datetime
import json
import pathlib
import re
import subprocess
import sys

try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    print("render_reference.py: jinja2 is not installed (apt-get install python3-jinja2)", file=sys.stderr)
    sys.exit(77)

HERE = pathlib.Path(__file__).resolve().parent


class GenerationBlock(jinja2.ext.Extension):
    """transformers' {% generation %}...{% endgeneration %}: renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def make_environment(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def variables(conv, case):
    """apply_chat_template's render(...) arguments for one case."""
    v = {
        "messages": case["messages"],
        "tools": case.get("tools"),
        "documents": case.get("documents"),
        "add_generation_prompt": case.get("add_generation_prompt", False),
        "bos_token": conv["bos_token"],
        "eos_token": conv["eos_token"],
    }
    for k, x in case.items():
        if k not in ("name", "messages", "tools", "documents", "add_generation_prompt"):
            v[k] = x
    return v


_compiled = {}


def render(env, source, vars_):
    try:
        if source not in _compiled:
            _compiled[source] = env.from_string(source)
        # Python prints some objects with their address ("<generator object ... at 0x7f..>"): not stable.
        return {"output": re.sub(r" at 0x[0-9a-f]+>", " at 0x?>", _compiled[source].render(**vars_))}
    except Exception as e:  # TemplateError (syntax, undefined, security, raise_exception), TypeError, ...
        return {"error": type(e).__name__, "message": str(e)}


def all_cases(conv, flip):
    for case in conv["cases"]:
        yield case
        if flip:
            flipped = dict(case)
            flipped["name"] = case["name"] + "+flip_gen"
            flipped["add_generation_prompt"] = not case.get("add_generation_prompt", False)
            yield flipped


def template_jobs(conv, paths, flip):
    """(job id, template source, is a chat, [(case name, variables)]) for each template."""
    for path in paths:
        cases = [(c["name"], variables(conv, c)) for c in all_cases(conv, flip)]
        yield path.stem, path.read_text(), True, cases


def snippet_jobs(snippets):
    for s in snippets:
        yield "snippet:" + s["name"], s["template"], False, [("render", s.get("vars", {}))]


def reference(env, jobs):
    return {jid: {name: render(env, src, v) for name, v in cases} for jid, src, _, cases in jobs}


def les_render(binary, now, jobs):
    job = {"now": now, "jobs": [{"id": jid, "template": src, "chat": chat,
                                 "cases": [dict(v, name=name) for name, v in cases]}
                                for jid, src, chat, cases in jobs]}
    proc = subprocess.run([binary], input=json.dumps(job).encode(), capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{binary} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return json.loads(proc.stdout.decode())


def same(ref, got):
    """LES matches Jinja2: the same text, or an error where Jinja2 raised (the
    template's own raise_exception message must match exactly)."""
    if "output" in ref:
        return got.get("output") == ref["output"]
    if "error" not in got:
        return False
    if ref["error"] == "TemplateError" or got.get("error") == "TemplateError":
        return got.get("error") == ref["error"] and got.get("message") == ref["message"]
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--les", metavar="BINARY")
    ap.add_argument("--table", action="store_true", help="with --les: print the template table")
    ap.add_argument("templates", nargs="*", help="template names (default: all in templates/)")
    args = ap.parse_args()

    conv = json.loads((HERE / "conversations.json").read_text())
    snippets = json.loads((HERE / "snippets.json").read_text())["snippets"]
    env = make_environment(datetime.datetime.fromisoformat(conv["now"]))
    paths = sorted((HERE / "templates").glob("*.jinja"))
    if args.templates:
        paths = [p for p in paths if p.stem in args.templates]
        snippets = [s for s in snippets if s["name"] in args.templates]
    expected_dir = HERE / "expected"

    if args.write or args.check:
        live = reference(env, template_jobs(conv, paths, flip=False))
        live_snippets = {jid[len("snippet:"):]: r["render"]
                         for jid, r in reference(env, snippet_jobs(snippets)).items()}
        bad = 0
        for path in paths:
            doc = {"template": path.name, "jinja2": jinja2.__version__, "cases": live[path.stem]}
            target = expected_dir / (path.stem + ".json")
            if args.write:
                target.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
            elif json.loads(target.read_text())["cases"] != doc["cases"]:
                bad += 1
                print(f"{path.stem}: the committed expectation differs from Jinja2 {jinja2.__version__}")
        target = expected_dir / "snippets.json"
        if args.write:
            if not args.templates:
                target.write_text(json.dumps({"jinja2": jinja2.__version__, "results": live_snippets},
                                             ensure_ascii=False, indent=1) + "\n")
        else:
            committed = json.loads(target.read_text())["results"]
            for name, r in live_snippets.items():
                if committed.get(name) != r:
                    bad += 1
                    print(f"snippet {name}: the committed expectation differs from Jinja2 {jinja2.__version__}")
        return 1 if bad else 0

    jobs = list(template_jobs(conv, paths, flip=True)) + list(snippet_jobs(snippets))
    live = reference(env, jobs)
    got = les_render(args.les, conv["now"], jobs)
    bad = 0
    rows = []
    for jid, cases in live.items():
        diffs, refused = [], []
        for name, ref in cases.items():
            g = got.get(jid, {}).get(name, {})
            if g.get("error") == "unsupported":
                refused.append(g.get("message", ""))
            elif not same(ref, g):
                diffs.append(name)
                print(f"{jid} / {name}:\n  jinja2: {json.dumps(ref, ensure_ascii=False)[:3000]}\n"
                      f"  LES:    {json.dumps(g, ensure_ascii=False)[:3000]}")
        bad += len(diffs)
        if not jid.startswith("snippet:"):
            rows.append((jid, len(cases), diffs, sorted(set(refused))))
        elif refused:
            print(f"{jid}: refused by LES: {refused[0]}")
    if args.table:
        print("| template | cases | result |")
        print("|---|---|---|")
        for stem, n, diffs, refused in rows:
            result = "identical" if not diffs and not refused else \
                     ("refused: " + "; ".join(refused) if refused else "DIFFERENT: " + ", ".join(diffs))
            print(f"| {stem} | {n} | {result} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
