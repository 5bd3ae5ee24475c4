"""Shared pieces of the R row's tests (tests/rlang): a real plotqd on an ephemeral port (the crash
suite's Plotqd), POST /render of an R file, a PNG's pixels (PIL, numpy: the tests run with the
runtime venv's interpreter), and the skip rule: a host without R or without runtime/r's manifest skips
(ctest SKIP_REGULAR_EXPRESSION "PLOTQ-SKIP:"), never passes."""
import base64
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE, "tests", "crash"))

from plotq_client import Plotqd, request  # noqa: E402

R_BINARY = "/usr/lib/R/bin/exec/R"
MANIFEST = os.path.join(SOURCE, "runtime", "r", "plotq-r-runtime.json")


def skip_without_r():
    if not os.path.exists(R_BINARY):
        print("PLOTQ-SKIP: R is not installed (%s); tools/setup.sh installs it" % R_BINARY)
        sys.exit(0)
    if not os.path.exists(MANIFEST):
        print("PLOTQ-SKIP: no R runtime manifest (%s); tools/setup.sh writes it" % MANIFEST)
        sys.exit(0)


def r_cold():
    """PLOTQ_TEST_R_COLD=1: the tests' plotqd runs R jobs cold (no R zygote), else warm (the default)."""
    return os.environ.get("PLOTQ_TEST_R_COLD") == "1"


def start_plotqd(binary, env=None):
    """A plotqd on its own SQLite file in a fresh temp dir; returns (plotqd, temp dir)."""
    tmp = tempfile.mkdtemp(prefix="plotq-rtest-")
    # Renders back to back: the slot's start rate (PLOTQ_RUNS_PER_MINUTE, 1 by default) is not
    # what these tests measure.
    env = dict({"PLOTQ_RUNS_PER_MINUTE": "100000"}, **(env or {}))
    if r_cold():  # every warm mode but r
        env["PLOTQ_WARM_MODES"] = "raw,data,plot,figure"
    d = Plotqd(binary, os.path.join(tmp, "plotq.db"), os.path.join(tmp, "plotqd.log"), env=env)
    d.start(timeout=120)
    return d, tmp


def render(port, job_id, source, themes=("light",), timeout_s=60, language="r", library="ggplot2"):
    body = {"job_id": job_id, "source": source, "library": library, "language": language,
            "themes": list(themes), "timeout_s": timeout_s}
    return request(port, "POST", "/render", body, user="rtest", timeout=timeout_s * len(themes) + 120)


def off_background_share(data):
    """(share of pixels that differ from the top-left pixel, i.e. the page background, that
    pixel, (width, height)). Run with the runtime venv's interpreter (PIL and numpy)."""
    import io

    import numpy as np
    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    bg = img[0, 0]
    off = np.any(img != bg, axis=2).mean()
    return float(off), tuple(int(v) for v in bg), (img.shape[1], img.shape[0])


def theme_png(answer, theme):
    out = answer["outputs"][theme]
    return base64.b64decode(out["png_base64"]) if out.get("png_base64") else None


def dump(obj):
    return json.dumps(obj)[:3000]


class Checks:
    """The transcript of a test: each check printed ok/FAIL as it runs, the failures kept."""

    def __init__(self):
        self.failures = []

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)
