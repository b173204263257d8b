"""OSWorld's own office metrics, run in ``.venv-osworld`` (never imported by the tests' Python).

``python osworld_metrics.py score JOBS.json`` prints, as JSON, OSWorld's score of each job
(``{"metric", "result", "expected", "options"}``: ``compare_table``, ``compare_docx_files``,
``compare_pptx_files`` or ``check_include_exclude``); an exception of OSWorld's function is
reported as its message (OSWorld's runner scores it 0).

``python osworld_metrics.py pptx BASE.pptx OUT`` writes variants of a deck with python-pptx
(only this venv has it): slides reordered, a text changed, a run made bold, the notes changed,
a shape moved.

The metric modules are loaded by file path under empty parent packages: desktop_env's
``__init__`` and ``metrics/__init__`` import its VM runner and every app's metrics (torch, OCR,
browsers). The few third-party modules the four metrics' files import but never call on these
paths (OCR and imaging for other docs metrics, PDF reading, URL parsing) are stubbed as empty
modules.
"""

import importlib.util
import json
import sys
import types
from pathlib import Path


def load_metrics() -> dict:
    import desktop_env

    root = Path(desktop_env.__file__).parent / "evaluators"
    for name, path in (
        ("desktop_env.evaluators", root),
        ("desktop_env.evaluators.metrics", root / "metrics"),
    ):
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(path)]
        sys.modules[name] = pkg
    for stub in ("easyocr", "pdfplumber", "tldextract", "skimage", "skimage.color"):
        if stub not in sys.modules:
            try:
                importlib.import_module(stub)
            except ImportError:
                module = types.ModuleType(stub)
                module.__path__ = []  # type: ignore[attr-defined]
                module.deltaE_ciede2000 = module.rgb2lab = None  # skimage.color's two names
                sys.modules[stub] = module
    out = {}
    for name in ("utils", "table", "docs", "slides", "general"):
        full = f"desktop_env.evaluators.metrics.{name}"
        spec = importlib.util.spec_from_file_location(full, root / "metrics" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
        out[name] = module
    return {
        "compare_table": out["table"].compare_table,
        "compare_docx_files": out["docs"].compare_docx_files,
        "compare_pptx_files": out["slides"].compare_pptx_files,
        "check_include_exclude": out["general"].check_include_exclude,
    }


def score(jobs_path: str) -> None:
    import contextlib
    import io
    import logging

    logging.disable(logging.CRITICAL)
    metrics = load_metrics()
    results = []
    for job in json.loads(Path(jobs_path).read_text()):
        fn = metrics[job["metric"]]
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # OSWorld's metrics print
                if job["metric"] == "check_include_exclude":
                    value = fn(job["result"], job["options"]["rules"])
                else:
                    value = fn(job["result"], job["expected"], **job["options"])
            results.append({"score": float(value)})
        except Exception as exc:  # OSWorld's runner scores a raising metric 0
            results.append({"score": 0.0, "error": f"{type(exc).__name__}: {exc}"})
    print(json.dumps(results))


def pptx_variants(base: str, out: str) -> None:
    from pptx import Presentation
    from pptx.util import Emu

    target = Path(out)

    def variant(name: str, change) -> None:
        prs = Presentation(base)
        change(prs)
        prs.save(str(target / f"deck_{name}.pptx"))

    def reorder(prs) -> None:
        ids = prs.slides._sldIdLst
        first = ids[0]
        ids.remove(first)
        ids.append(first)

    def retitle(prs) -> None:
        prs.slides[1].shapes.title.text_frame.paragraphs[0].runs[0].text = "Spending"

    def bold(prs) -> None:
        title = prs.slides[1].shapes.title
        body = next(s for s in prs.slides[1].placeholders if s.shape_id != title.shape_id)
        body.text_frame.paragraphs[0].runs[0].font.bold = True

    def notes(prs) -> None:
        prs.slides[0].notes_slide.notes_text_frame.text = "Speak quickly"

    def move(prs) -> None:
        shape = prs.slides[1].shapes.title
        shape.left = Emu(shape.left + 900000)

    for name, change in (
        ("same", lambda prs: None),
        ("reordered", reorder),
        ("retitled", retitle),
        ("bold", bold),
        ("notes", notes),
        ("moved", move),
    ):
        variant(name, change)


if __name__ == "__main__":
    if sys.argv[1] == "score":
        score(sys.argv[2])
    else:
        pptx_variants(sys.argv[2], sys.argv[3])
