"""Run the runtime's own C samples (hicann/runtime ``example/``) on npusim, unmodified (issue 39).

    python scripts/run_runtime_samples.py [--src DIR] [--prefix DIR] [--work DIR]
                                          [--only SUBSTR ...] [--timeout S] [--json FILE]

``--src``: a checkout of hicann/runtime, or its git directory (read with ``git archive``);
default ``$NPUSIM_RUNTIME_SRC``, else the mirror at /work/.mirror/hicann+runtime/repo.
The script copies ``example/`` to a work directory, writes (or reuses, ``--prefix``) an
``npusim cabi`` install, and runs each sample's own ``run.sh`` with the install's
``bin/setenv.bash`` sourced and this Python's ``bin`` first on PATH (the samples' data scripts
call ``python3`` with numpy). Each sample's output is compared with the output its README shows
for hardware (the ``text`` blocks of README.md): every shown line must appear, in order, where
``...`` in the README matches anything and hexadecimal addresses match any address.

Result per sample: ``pass`` (exit 0, output as documented), ``differs`` (exit 0, some lines not
as documented), ``fail`` (non-zero exit or timeout), ``skipped`` (out of scope: aclnn operators,
tdt, profiling, dump -- parts of CANN npusim does not simulate). docs/cabi_samples.md records a
run.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

MIRROR = "/work/.mirror/hicann+runtime/repo"

# the order of issue 39: runtime-only samples first, then the ones with kernels
ORDER = [
    "0_quickstart/0_", "0_quickstart/1_", "0_quickstart/2_", "1_basic_features/context",
    "1_basic_features/device", "1_basic_features/stream", "2_advanced_features/built_in_task",
    "1_basic_features/memory/0_", "1_basic_features/memory/1_", "1_basic_features/memory/2_",
    "1_basic_features/memory/3_", "1_basic_features/memory/4_", "1_basic_features/memory/5_",
    "1_basic_features/memory/6_", "1_basic_features/memory/9_", "1_basic_features/event",
    "2_advanced_features/model_ri", "2_advanced_features/label", "2_advanced_features/callback",
    "2_advanced_features/kernel", "0_quickstart/4_",
]
OUT_OF_SCOPE = [
    (re.compile(r"aclnn"), "aclnn operators (opapi/nnopbase) are not simulated"),
    (re.compile(r"acl_tdt|tdt_"), "tdt channels/queues are not simulated"),
    (re.compile(r"acl_prof|aprof_pub|ms_tools_ext|mstx"), "profiling is not simulated"),
    (re.compile(r"acl_dump|adump"), "dump is not simulated"),
    (re.compile(r"aclrtIpc\w+|aclrtMem(Export|Import)\w*Shareable\w*|aclrtNotifyImport\w*|"
                r"aclrtDeviceGetBareTgid"),
     "inter-process sharing (IPC, shareable handles): npusim simulates one process"),
]


def copy_examples(src: str, dest: str) -> str:
    """``example/`` of ``src`` (a checkout or a git directory) copied under ``dest``."""
    if os.path.isdir(os.path.join(src, "example")):
        shutil.copytree(os.path.join(src, "example"), os.path.join(dest, "example"), symlinks=True)
    else:
        data = subprocess.run(["git", "-C", src, "archive", "HEAD", "example"],
                              capture_output=True, check=True).stdout
        tarfile.open(fileobj=io.BytesIO(data)).extractall(dest)
    return os.path.join(dest, "example")


def find_samples(example: str) -> list[str]:
    """Every folder with a run.sh, relative to ``example``, in the issue's order."""
    found = []
    for dirpath, _, files in os.walk(example):
        if "run.sh" in files:
            found.append(os.path.relpath(dirpath, example))

    def rank(rel):
        for i, prefix in enumerate(ORDER):
            if rel.startswith(prefix):
                return i, rel
        return len(ORDER), rel
    return sorted(found, key=rank)


def scope(example: str, rel: str) -> str | None:
    """Why a sample is out of scope, or None."""
    text = rel
    for dirpath, _, files in os.walk(os.path.join(example, rel)):
        for f in files:
            if f.endswith((".cpp", ".h", ".c", ".txt", ".sh")):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    text += fh.read()
    for pattern, why in OUT_OF_SCOPE:
        if pattern.search(text):
            return why
    return None


def expected_output(example: str, rel: str) -> list[str]:
    """The output lines a sample's README shows (its ``text`` blocks; directory trees left out)."""
    for name in ("README.md", "README_en.md"):
        path = os.path.join(example, rel, name)
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        lines = []
        for block in re.findall(r"^```text\n(.*?)^```", text, re.M | re.S):
            if any(c in block for c in "├└│"):
                continue
            lines += [ln.strip() for ln in block.split("\n") if ln.strip()]
        if lines:
            return lines
    return []


_HEX = re.compile(r"0x[0-9a-fA-F]+")


def _pattern(line: str) -> re.Pattern:
    parts = re.split(r"\.\.\.|…|<[A-Za-z_][\w ]*>|\bx+\b", line)
    rx = ".*".join(re.escape(_HEX.sub("0x#", p)) for p in parts)
    rx = rx.replace("0x\\#", "0x[0-9a-fA-F]+").replace("0x#", "0x[0-9a-fA-F]+")
    rx = re.sub(r"\\ ", r"\\s+", rx)
    return re.compile(rx)


def compare(expected: list[str], actual: str) -> list[str]:
    """The expected lines not found (in order) in the actual output."""
    lines = [ln.strip() for ln in actual.split("\n")]
    missing, i = [], 0
    for exp in expected:
        pat = _pattern(exp)
        j = i
        while j < len(lines) and not pat.search(lines[j]):
            j += 1
        if j == len(lines):
            missing.append(exp)
        else:
            i = j + 1
    return missing


def first_error(output: str) -> str:
    """The first line of a sample's output that reports an error (for the table)."""
    for line in output.split("\n"):
        if re.search(r"\[ERROR\]|error code|returned \d{6}|Segmentation|Abort|error:", line):
            return line.strip()[:200]
    return ""


def markdown(results: list[dict]) -> str:
    """The results as the table of docs/cabi_samples.md."""
    rows = ["| sample | result | output vs README | first error / why |", "|---|---|---|---|"]
    for r in results:
        if r["status"] == "skipped":
            rows.append(f"| `{r['sample']}` | out of scope | - | {r['why']} |")
            continue
        n, miss = r["expected_lines"], len(r["missing"])
        cmp_ = f"{n - miss}/{n} lines" if n else "no output shown"
        err = first_error(r["output"]).replace("|", "\\|")
        rows.append(f"| `{r['sample']}` | {r['status']} (rc {r['rc']}) | {cmp_} | {err} |")
    return "\n".join(rows) + "\n"


def install(prefix: str) -> None:
    subprocess.run([sys.executable, "-m", "npusim", "cabi", "--prefix", prefix], check=True)


def run_one(example: str, rel: str, prefix: str, timeout: float) -> dict:
    d = os.path.join(example, rel)
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["ASCEND_HOME_PATH"] = prefix
    # line-buffered C stdio and unbuffered Python (the device printf of the embedded simulator),
    # so the program's lines and the kernels' lines keep the order a terminal shows
    env["PYTHONUNBUFFERED"] = "1"
    line = "stdbuf -oL -eL " if shutil.which("stdbuf") else ""
    cmd = f'source "{prefix}/bin/setenv.bash" && {line}bash ./run.sh'
    t0 = time.monotonic()
    # a session of its own, so a timeout ends the whole sample (multi-process samples leave
    # children holding the output pipe)
    p = subprocess.Popen(["bash", "-c", cmd], cwd=d, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace",
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = "timeout"
    secs = time.monotonic() - t0
    expected = expected_output(example, rel)
    missing = compare(expected, out)
    status = "fail" if rc != 0 else ("pass" if not missing else "differs")
    return {"sample": rel, "status": status, "rc": rc, "seconds": round(secs, 1),
            "expected_lines": len(expected), "missing": missing, "output": out[-6000:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.environ.get("NPUSIM_RUNTIME_SRC", MIRROR))
    ap.add_argument("--prefix", help="an existing `npusim cabi` install (default: write one)")
    ap.add_argument("--work", help="work directory (default: a temporary one, kept)")
    ap.add_argument("--only", nargs="*", default=[], help="run samples whose path contains these")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--list", action="store_true", help="list the samples and their scope")
    ap.add_argument("--markdown", help="write the results as a markdown table here")
    args = ap.parse_args(argv)
    if not os.path.exists(args.src):
        print(f"no hicann/runtime source at {args.src} (--src or NPUSIM_RUNTIME_SRC)")
        return 2
    work = args.work or tempfile.mkdtemp(prefix="npusim-samples-")
    os.makedirs(work, exist_ok=True)
    if os.path.exists(os.path.join(work, "example")):
        shutil.rmtree(os.path.join(work, "example"))
    example = copy_examples(args.src, work)
    samples = find_samples(example)
    if args.only:
        samples = [s for s in samples if any(o in s for o in args.only)]
    if args.list:
        for s in samples:
            print(f"{s}: {scope(example, s) or 'in scope'}")
        return 0
    prefix = os.path.abspath(args.prefix or os.path.join(work, "cann"))
    if not os.path.exists(os.path.join(prefix, "bin", "setenv.bash")):
        install(prefix)
    results = []
    for rel in samples:
        why = scope(example, rel)
        if why:
            res = {"sample": rel, "status": "skipped", "why": why}
        else:
            res = run_one(example, rel, prefix, args.timeout)
        results.append(res)
        extra = f" ({res['why']})" if res["status"] == "skipped" else \
            f" ({len(res['missing'])} lines differ)" if res["status"] == "differs" else ""
        print(f"{res['status']:8s} {rel}{extra}" +
              (f" rc={res['rc']} {res['seconds']}s" if "rc" in res else ""), flush=True)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown(results))
    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("summary:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), f"(work: {work})")
    return 0 if not counts.get("fail") else 1


if __name__ == "__main__":
    sys.exit(main())
