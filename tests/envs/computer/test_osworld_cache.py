"""The OSWorld download cache: filled from a local HTTP server on 127.0.0.1 serving generated
files (tests never reach the internet), read by the loader, and reported when absent."""

import hashlib
import http.server
import json
import threading

import pytest
from typer.testing import CliRunner

from palaestra.cli import app
from palaestra.envs.computer import osworld
from palaestra.envs.computer.osworld_cache import (
    INDEX,
    Cache,
    FetchError,
    fetch,
    fill,
    key,
    task_urls,
)

runner = CliRunner(env={"COLUMNS": "200"})
FILES = {
    "/sheet.xlsx": b"PK\x03\x04 a spreadsheet's bytes",
    "/gold.xlsx": b"PK\x03\x04 the gold file's bytes",
}


class Handler(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):
        Handler.hits.append(self.path)
        if self.path == "/quota":  # what Google Drive sends when its quota is spent
            body, ctype, code = b"<!DOCTYPE html><html>Quota exceeded</html>", "text/html", 200
        elif self.path in FILES:
            body, ctype, code = FILES[self.path], "application/octet-stream", 200
        else:
            body, ctype, code = b"no such file", "text/plain", 404
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def calc_task(base: str, tid: str = "t1") -> dict:
    """An OSWorld-format Calc task whose document and gold file the server serves."""
    return {
        "id": tid,
        "snapshot": "libreoffice_calc",
        "instruction": "Sort the table by the second column.",
        "config": [
            {
                "type": "download",
                "parameters": {
                    "files": [{"url": f"{base}/sheet.xlsx", "path": "/home/user/sheet.xlsx"}]
                },
            },
            {"type": "open", "parameters": {"path": "/home/user/sheet.xlsx"}},
        ],
        "evaluator": {
            "func": "compare_table",
            "result": {"type": "vm_file", "path": "/home/user/sheet.xlsx", "dest": "s.xlsx"},
            "expected": {"type": "cloud_file", "path": f"{base}/gold.xlsx", "dest": "g.xlsx"},
            "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
        },
    }


def test_fill_fetches_what_is_missing_and_skips_what_is_there(server, tmp_path):
    cache = Cache(tmp_path / "cache")
    urls = task_urls(calc_task(server))
    assert urls == [f"{server}/sheet.xlsx", f"{server}/gold.xlsx"]
    seen = []
    rep = fill(cache, urls, progress=lambda url, outcome: seen.append(outcome))
    assert rep.fetched == urls and not rep.failed and seen == ["fetched", "fetched"]
    # files are named by the SHA-256 of their URL; the index says what each is
    assert (tmp_path / "cache" / key(urls[0])).read_bytes() == FILES["/sheet.xlsx"]
    entry = json.loads((tmp_path / "cache" / INDEX).read_text())[key(urls[1])]
    assert entry["url"] == urls[1] and entry["size"] == len(FILES["/gold.xlsx"])
    assert entry["sha256"] == hashlib.sha256(FILES["/gold.xlsx"]).hexdigest()
    Handler.hits.clear()
    again = fill(cache, urls)
    assert again.present == urls and not again.fetched and Handler.hits == []


def test_fill_says_why_a_file_could_not_be_had(server, tmp_path):
    cache = Cache(tmp_path)
    bad = [
        f"{server}/missing.xlsx",
        f"{server}/quota",
        "ftp://example.org/x",
        "http://127.0.0.1:9/x",
    ]
    rep = fill(cache, bad)
    assert not rep.fetched
    assert rep.failed[bad[0]] == "HTTP 404 Not Found"
    assert "a web page, not the file" in rep.failed[bad[1]]  # never cached as the document
    assert rep.failed[bad[2]] == "not an http(s) URL"
    assert "cannot reach the host" in rep.failed[bad[3]]
    assert not any(cache.has(u) for u in bad) and not (tmp_path / INDEX).exists()
    with pytest.raises(FetchError):
        fetch(bad[0])


def test_the_cli_fills_the_cache_from_task_files(server, tmp_path):
    tasks = tmp_path / "tasks" / "libreoffice_calc"
    tasks.mkdir(parents=True)
    (tasks / "t1.json").write_text(json.dumps(calc_task(server)))
    broken = calc_task(server, "t2")
    broken["config"][0]["parameters"]["files"][0]["url"] = f"{server}/gone.xlsx"
    (tasks / "t2.json").write_text(json.dumps(broken))
    out = runner.invoke(app, ["osworld", "cache", str(tmp_path / "c"), "--tasks", str(tasks)])
    assert out.exit_code == 1, out.output  # one URL failed: said, and the exit code says so
    assert "2 fetched, 0 already there, 1 failed, of 3 files" in out.output
    assert f"{server}/gone.xlsx: HTTP 404" in out.output
    out = runner.invoke(
        app, ["osworld", "cache", str(tmp_path / "c"), "--tasks", str(tasks / "t1.json")]
    )
    assert out.exit_code == 0 and "0 fetched, 2 already there, 0 failed" in out.output
    out = runner.invoke(
        app, ["osworld", "cache", str(tmp_path / "c"), "--tasks", str(tmp_path / "no")]
    )
    assert out.exit_code == 2 and "no task files" in out.output


def test_the_loader_takes_files_from_the_cache_and_names_what_it_lacks(server, tmp_path):
    data = calc_task(server)
    empty = osworld.convert(data, cache=Cache(tmp_path / "empty"))
    assert empty.task is None and empty.needs == task_urls(data)
    assert "no network here" in empty.reasons[-1] and f"{server}/gold.xlsx" in empty.reasons[-1]
    cache = Cache(tmp_path / "full")
    fill(cache, task_urls(data))
    conv = osworld.convert(data, cache=cache)
    assert conv.task is not None and not conv.needs, conv.reasons
    setup, check = conv.task.setup, conv.task.verifier["checks"][0]
    assert setup["apps"] == [["calc", "/home/user/sheet.xlsx"]]
    assert list(setup["binary"]) == ["/home/user/sheet.xlsx"]
    assert check["kind"] == "compare_table" and check["path"] == "/home/user/sheet.xlsx"
    assert check["options"]["rules"][0]["sheet_idx1"] == "EI0"
    # the report lists, per task the cache cannot serve, the URLs it needs
    folder = tmp_path / "domain"
    folder.mkdir()
    (folder / "t1.json").write_text(json.dumps(data))
    rep = osworld.report(folder, cache=Cache(tmp_path / "empty"))
    assert rep["needs"] == {"t1": task_urls(data)} and "t1" in rep["unsupported"]
    rep = osworld.report(folder, cache=cache)
    assert rep["needs"] == {} and "no reference solution" in rep["unvalidated"]["t1"]


def test_the_report_covers_the_office_domains_offline(tmp_path, monkeypatch):
    """With an empty cache every shared office task that downloads is listed with its URLs."""
    monkeypatch.setenv("PALAESTRA_OSWORLD_CACHE", str(tmp_path))
    out = runner.invoke(app, ["osworld", "report", "--json"])
    assert out.exit_code == 0, out.output
    reps = json.loads(out.output)
    assert list(reps) == list(osworld.DOMAINS)
    calc = reps["libreoffice_calc"]
    assert calc["total"] == 42 and not calc["runnable"]
    tid = "01b269ae-2111-4a07-81fd-3fcd711993b0"  # its document and its gold file
    assert [u.split("id=")[1][:8] for u in calc["needs"][tid]] == ["1FuOZ-5Y", "1HTle3vg"]
    assert "does not hold" in calc["unsupported"][tid]
    assert reps["os"]["runnable"] == osworld.report()["runnable"]  # the os domain as before
