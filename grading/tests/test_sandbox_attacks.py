"""A candidate's attacks on the code-execution path, each one found to work once and fixed.

Every test here is an attack that used to succeed (a way out of the network namespace,
a trusted-side crash or memory blow-up from crafted output files, a verdict that could
not be shown or stored); it must now get a plain verdict and leave the worker alone.
Contained attacks live in test_sandbox_hostile.py and test_judge_sandbox.py.
"""

import textwrap

import pytest

import grading
from grading.judge import load_judge
from grading.judge.runner import Outcome, judge_submission
from grading.sandbox import Limits, Status, run_python, sandbox_available
from questions.loader import BANK_DIR, load_file
from questions.schema import Question

AVAILABLE, WHY_NOT = sandbox_available()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)]

SMALL = Limits(cpu_seconds=3, wall_seconds=6, memory_bytes=512 << 20, max_processes=8,
               max_open_files=32, max_file_bytes=1 << 20, max_output_bytes=8192,
               tmp_bytes=4 << 20, max_result_bytes=4 << 20)
SEED = 123_456_789
TOP_P = "speculative/119-top-p-sampler"


@pytest.fixture(scope="module")
def top_p():
    question = Question.from_data(load_file(BANK_DIR / f"{TOP_P}.yaml").data)
    return dict(question.part("keep").raw)


def run(source: str) -> object:
    return run_python(files={"main.py": textwrap.dedent(source).encode()}, entry="main.py",
                      limits=SMALL, warm=False)


# ------------------------------------------------------------------ the network


def test_no_socket_family_but_unix_can_be_made():
    """AF_VSOCK ignores network namespaces: from inside a VM it reaches the hypervisor's
    host (CID 2). Nothing but AF_UNIX (which the namespace does confine) may be opened."""
    result = run("""
        import ctypes, errno, socket
        families = {"AF_VSOCK": 40, "AF_ALG": 38, "AF_TIPC": 30, "AF_RDS": 21, "AF_CAN": 29,
                    "AF_BLUETOOTH": 31, "AF_KEY": 15, "AF_XDP": 44, "AF_SMC": 43,
                    "AF_QIPCRTR": 42, "AF_INET": 2, "AF_PACKET": 17}
        for name, family in families.items():
            seen = set()
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET,
                         socket.SOCK_RAW):
                try:
                    socket.socket(family, kind).close()
                    seen.add("OPEN")
                except OSError as e:
                    seen.add(errno.errorcode.get(e.errno, str(e.errno)))
                try:
                    for end in socket.socketpair(family, kind):
                        end.close()
                    seen.add("PAIR")
                except OSError as e:
                    seen.add(errno.errorcode.get(e.errno, str(e.errno)))
            print(name, ",".join(sorted(seen)))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        # AF_VSOCK with the upper half set: the kernel reads the family as an int.
        print("VSOCK-HIGH", libc.syscall(41, ctypes.c_long(0x1_0000_0028), 1, 0), ctypes.get_errno())
        a, b = socket.socketpair(socket.AF_UNIX)
        a.send(b"unix still works")
        print("UNIX", b.recv(100).decode())
    """)
    assert result.status == Status.OK, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    for name in ("AF_VSOCK", "AF_ALG", "AF_TIPC", "AF_RDS", "AF_CAN", "AF_BLUETOOTH", "AF_KEY",
                 "AF_XDP", "AF_SMC", "AF_QIPCRTR", "AF_INET", "AF_PACKET"):
        assert lines[name] == "EPERM", (name, lines[name])
    assert lines["VSOCK-HIGH"] == "-1 1"
    assert lines["UNIX"] == "unix still works"


# ------------------------------------------------------------------ out/ as data


def test_out_file_names_that_are_not_utf8_are_left_out_readably():
    """A name the host decodes to lone surrogates used to land in result.note and from
    there in the verdict's feedback, which then cannot be encoded: the results page
    and the interviewer's monitor fail to render it, PostgreSQL's jsonb refuses it."""
    result = run("""
        import os
        os.symlink('/etc/passwd', b'/sandbox/out/\\xff-link')
        open(b'/sandbox/out/\\xfe-file', 'w').write('x')
        os.mkdir(b'/sandbox/out/\\xfd-dir')
        open(b'/sandbox/out/\\xfd-dir/inner', 'w').write('y')
        open('/sandbox/out/fine.txt', 'w').write('ok')
    """)
    assert result.status == Status.OK, result.stderr
    result.note.encode("utf-8")
    assert result.files == {"fine.txt": b"ok"}
    assert "xff-link" in result.note and "xfe-file" in result.note and "xfd-dir" in result.note


def test_error_text_from_the_sandbox_cannot_break_or_bloat_the_verdict(top_p):
    """The error records are the candidate's data: a lone surrogate in an exception
    message (the harness writes it as JSON's \\udcff) made feedback unencodable, and a
    record written behind the harness's back put megabytes into the feedback."""
    raised = grading.grade(top_p, textwrap.dedent("""
        def top_p_keep(logits, p, temperature):
            raise ValueError("boom \\udcff")
    """), {"judge_seed": SEED})
    assert raised.mistake == "runtime_error"
    raised.feedback.encode("utf-8")
    assert "boom" in raised.feedback

    huge = grading.grade(top_p, textwrap.dedent("""
        import json, os
        record = {"error": {"type": "E\\udcff" * 100_000, "message": "m" * 2_000_000,
                            "traceback": "t"}}
        first = json.load(open("cases.json"))["cases"][0]["id"]
        with open(f"/sandbox/out/{first}.json", "w") as handle:
            json.dump(record, handle)
        os._exit(1)

        def top_p_keep(logits, p, temperature):
            return None
    """), {"judge_seed": SEED})
    assert huge.mistake == "runtime_error"
    huge.feedback.encode("utf-8")
    assert len(huge.feedback) < 10_000


def test_a_judge_quoting_a_huge_output_does_not_bloat_the_verdict():
    """086's check quotes the streamed delta: half a megabyte of it went into the
    feedback, stored with the attempt and shown on every page that lists it."""
    question = Question.from_data(load_file(BANK_DIR / "serving/086-streaming-detokenizer.yaml").data)
    verdict = grading.grade(dict(question.part("stream").raw), textwrap.dedent("""
        class StreamDecoder:
            def __init__(self, merges, stops):
                pass

            def push(self, token):
                return "Z" * 150_000 + "\\udcff"

            def finish(self):
                return ""
    """), {"judge_seed": SEED})
    assert verdict.mistake == "wrong_answer"
    verdict.feedback.encode("utf-8")
    assert len(verdict.feedback) < 10_000


# ------------------------------------------------------------------ crafted .npy outputs


def npy_header(descr: str, shape: str) -> str:
    """Python source for the bytes of a version 1.0 .npy header (no data)."""
    return (f"header = b\"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}}}\"\n"
            "header += b' ' * (63 - (10 + len(header)) % 64) + b'\\n'\n"
            "data = b'\\x93NUMPY\\x01\\x00' + len(header).to_bytes(2, 'little') + header\n")


def test_crafted_array_files_are_malformed_output_not_a_worker_crash(top_p):
    """Each case's output written behind the harness's back, then exit:
    - a header whose shape overflows int64 (OverflowError escaped the judge),
    - a header claiming 8 TiB (MemoryError escaped; a claim the kernel's overcommit
      accepts was allocated up front),
    - a shape of booleans (TypeError escaped),
    - a zero-size dtype with 2**40 elements,
    - one small array named 100 times (each name used to decode to its own copy: a
      4 MiB result file and an 8 MiB array made the worker allocate terabytes).
    Every one must be a wrong answer whose output "could not be read"."""
    source = textwrap.dedent("""
        import json, os
        import numpy as np
        ids = [case["id"] for case in json.load(open("cases.json"))["cases"]]
        crafted = {}
    """)
    for index, (descr, shape) in enumerate([("<f8", f"({2 ** 70},)"), ("<f8", f"({2 ** 40},)"),
                                            ("<f8", "(True,)"), ("|V0", f"({2 ** 40},)")]):
        source += npy_header(descr, shape) + f"crafted[ids[{index}]] = data + b'\\0' * 64\n"
    source += textwrap.dedent("""
        for cid, data in crafted.items():
            open(f"/sandbox/out/{cid}.0.npy", "wb").write(data)
            json.dump({"value": {"__ndarray__": f"{cid}.0.npy"}}, open(f"/sandbox/out/{cid}.json", "w"))
        cid = ids[4]
        np.save(f"/sandbox/out/{cid}.0.npy", np.zeros(1024))
        json.dump({"value": [{"__ndarray__": f"{cid}.0.npy"}] * 100}, open(f"/sandbox/out/{cid}.json", "w"))
        os._exit(1)

        def top_p_keep(logits, p, temperature):
            return None
    """)
    judge = load_judge(f"{TOP_P}.judge.py", "keep")
    report = judge_submission(judge=judge, source=source, entrypoint="top_p_keep", seed=SEED,
                              limits=Limits(cpu_seconds=10, wall_seconds=20))
    assert report.outcome is Outcome.WRONG_ANSWER
    for result in report.results[:5]:
        assert result.outcome is Outcome.WRONG_ANSWER, result
        assert "could not be read" in result.detail, result.detail
    assert "more than once" in report.results[4].detail
    assert all(result.outcome is Outcome.RUNTIME_ERROR for result in report.results[5:])


def test_an_honest_array_output_still_decodes(top_p):
    """The checks on array files refuse nothing the harness writes itself."""
    report = judge_submission(
        judge=load_judge(f"{TOP_P}.judge.py", "keep"), entrypoint="top_p_keep", seed=None,
        source="import numpy as np\n\ndef top_p_keep(logits, p, temperature):\n"
               "    return [np.asfortranarray(logits > 0), np.zeros((0, 3)), np.arange(3.0)[::-1]]\n",
        limits=Limits(cpu_seconds=10, wall_seconds=20))
    for result in report.results:
        assert "could not be read" not in result.detail, result.detail
        assert result.outcome is Outcome.WRONG_ANSWER
