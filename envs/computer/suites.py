"""The ``computer-basic`` suite: built-in desktop tasks with oracles, validated by execution.

Decisions:

- Tasks are data made by small Python helpers (one per kind of check), in five groups: file
  management, text editing, shell and scripting, archives and permissions, mixed GUI + code
  (plus one infeasible task, which the agent must refuse with ``fail``).
- Oracles are action lists, ``{"policy": "replay", "data": [...]}``. Where the task can be done
  with the GUI alone (typing in the terminal, editing in the editor, closing a window), the
  oracle uses only GUI actions, so the GUI path is proven too; elsewhere it is code.
- Only tasks that passed execution validation (oracle twice, agreeing; doing nothing fails) are
  emitted: ``validation.json`` beside this file records the last run
  (:func:`palaestra.envs.computer.validation.write_validation`), keyed by a hash of each task
  so an edited task is held back until validated again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from palaestra.tasks import Task
from palaestra.verifiers.validation import ValidationRecord, digest

SUITE = "computer-basic"
ENV_ID = "palaestra/computer-v0"


def _all(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "all", "checks": list(checks)}


def exists(path: str, kind: str | None = None, present: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": "file_exists", "path": path, "exists": present}
    if kind:
        spec["type"] = kind
    return spec


def contents(path: str, **how: Any) -> dict[str, Any]:
    return {"kind": "file_contents", "path": path, **how}


def output(command: str, **how: Any) -> dict[str, Any]:
    return {"kind": "command_output", "command": command, **how}


def _task(
    tid: str,
    group: str,
    instruction: str,
    verifier: dict[str, Any],
    oracle: list[Any],
    setup: dict[str, Any] | None = None,
    tags: tuple[str, ...] = (),
    max_steps: int = 30,
) -> Task:
    gui = all(
        isinstance(a, str) and a.split("(", 1)[0] not in ("run_shell", "run_python", "write_file")
        for a in oracle
    )
    return Task(
        id=tid,
        family="computer",
        env=ENV_ID,
        instruction=instruction,
        setup=setup or {},
        verifier=verifier if verifier.get("kind") == "all" else _all(verifier),
        max_steps=max_steps,
        metadata={
            "source": "palaestra.envs.computer.suites",
            "group": group,
            "oracle": "gui" if gui else "code",
            "tags": ["computer", group, *tags],
        },
        oracle={"policy": "replay", "data": oracle},
    )


LOG = "\n".join(
    f"2024-05-0{d} 10:0{i}:00 {lvl} {msg}"
    for d, (i, lvl, msg) in enumerate(
        [
            (1, "INFO", "service started"),
            (2, "ERROR", "disk full"),
            (3, "INFO", "retrying"),
            (4, "ERROR", "timeout talking to db"),
            (5, "WARN", "slow response"),
        ],
        start=1,
    )
)


def file_tasks() -> list[Task]:
    g = "files"
    return [
        _task(
            "make-project-dir",
            g,
            "Create the folder ~/projects/alpha (with its parent).",
            exists("projects/alpha", "dir"),
            ["run_shell('mkdir -p ~/projects/alpha')"],
        ),
        _task(
            "move-todo",
            g,
            "Move the file todo.txt from the Desktop folder into the Documents folder.",
            _all(exists("Documents/todo.txt", "file"), exists("Desktop/todo.txt", present=False)),
            ["run_shell('mv ~/Desktop/todo.txt ~/Documents/')"],
            {"files": {"Desktop/todo.txt": "call the bank\n"}},
        ),
        _task(
            "backup-notes",
            g,
            "Make a copy of ~/notes.txt at ~/backup/notes.txt (keep the original).",
            _all(
                {"kind": "checksum", "path": "backup/notes.txt", "sha256": _sha("keep me\n")},
                {**exists("notes.txt", "file"), "gate": True},
            ),
            ["run_shell('mkdir -p ~/backup && cp ~/notes.txt ~/backup/')"],
            {"files": {"notes.txt": "keep me\n"}},
        ),
        _task(
            "rename-draft",
            g,
            "Rename ~/Documents/draft.md to final.md in the same folder.",
            _all(
                contents("Documents/final.md", equals="# Report"),
                exists("Documents/draft.md", present=False),
            ),
            ["run_shell('mv ~/Documents/draft.md ~/Documents/final.md')"],
            {"files": {"Documents/draft.md": "# Report\n"}},
        ),
        _task(
            "delete-tmp-files",
            g,
            "Delete every .tmp file in ~/work (and its subfolders); keep all other files.",
            {"kind": "dir_tree", "path": "work", "equals": ["a.txt", "sub/", "sub/b.txt"]},
            ["run_shell(\"find ~/work -name '*.tmp' -delete\")"],
            {
                "files": {
                    "work/a.txt": "a",
                    "work/x.tmp": "",
                    "work/sub/b.txt": "b",
                    "work/sub/y.tmp": "",
                }
            },
        ),
        _task(
            "sort-by-extension",
            g,
            "In ~/inbox, move the .jpg files into ~/inbox/images and the .pdf files into "
            "~/inbox/docs (create the folders).",
            {
                "kind": "dir_tree",
                "path": "inbox",
                "equals": ["docs/", "docs/c.pdf", "images/", "images/a.jpg", "images/b.jpg"],
            },
            [
                "run_shell('cd ~/inbox && mkdir -p images docs && mv *.jpg images/ "
                "&& mv *.pdf docs/')"
            ],
            {"files": {"inbox/a.jpg": "A", "inbox/b.jpg": "B", "inbox/c.pdf": "C"}},
        ),
        _task(
            "link-latest",
            g,
            "Create a symbolic link ~/latest that points to ~/Documents/report.txt.",
            _all(
                exists("latest", "symlink"),
                output("readlink -f ~/latest", equals="/home/user/Documents/report.txt"),
            ),
            ["run_shell('ln -s ~/Documents/report.txt ~/latest')"],
            {"files": {"Documents/report.txt": "Q3 numbers\n"}},
        ),
        _task(
            "largest-file",
            g,
            "Find the largest file in ~/data and write just its file name to ~/answer.txt.",
            contents("answer.txt", equals="big.bin"),
            [
                "run_shell('ls -S ~/data | head -n 1 > ~/answer.txt')",
            ],
            {"files": {"data/small.txt": "x" * 10, "data/big.bin": "y" * 5000, "data/m": "z" * 99}},
        ),
        _task(
            "count-files",
            g,
            "Count the files in ~/inbox and write the number to ~/count.txt.",
            contents("count.txt", equals="4"),
            ["run_shell('ls ~/inbox | wc -l > ~/count.txt')"],
            {"files": {f"inbox/f{i}.txt": str(i) for i in range(4)}},
        ),
        _task(
            "remove-empty-dirs",
            g,
            "Remove every empty folder under ~/tree (folders that hold files stay).",
            {"kind": "dir_tree", "path": "tree", "equals": ["keep/", "keep/file.txt"]},
            ["run_shell('find ~/tree -mindepth 1 -type d -empty -delete')"],
            {"files": {"tree/keep/file.txt": "x"}, "dirs": ["tree/e1", "tree/e2/e3"]},
        ),
    ]


ESSAY = "The colour of the sky.\nA colour wheel.\n"


def text_tasks() -> list[Task]:
    g = "text"
    editor = {"apps": [["editor", "/home/user/notes.txt"]]}
    return [
        _task(
            "append-line-in-editor",
            g,
            "In the text editor showing notes.txt, add a last line 'buy milk' and save.",
            contents("notes.txt", equals="eggs\nbread\nbuy milk"),
            ["key('ctrl+End')", "type_text('\\nbuy milk')", "key('ctrl+s')", "wait(0.5)"],
            {**editor, "files": {"notes.txt": "eggs\nbread"}},
            ("gui",),
        ),
        _task(
            "heading-in-editor",
            g,
            "In the text editor showing notes.txt, insert '# Groceries' as a new first line "
            "and save.",
            contents("notes.txt", equals="# Groceries\neggs"),
            ["key('ctrl+Home')", "type_text('# Groceries\\n')", "key('ctrl+s')", "wait(0.5)"],
            {**editor, "files": {"notes.txt": "eggs"}},
            ("gui",),
        ),
        _task(
            "rewrite-in-editor",
            g,
            "In the text editor showing notes.txt, delete the line 'DELETE ME' and save.",
            contents("notes.txt", equals="first\nlast"),
            [
                "key('ctrl+Home')",
                "key('Down')",
                "key('shift+Down')",
                "key('Delete')",
                "key('ctrl+s')",
                "wait(0.5)",
            ],
            {**editor, "files": {"notes.txt": "first\nDELETE ME\nlast"}},
            ("gui",),
        ),
        _task(
            "american-spelling",
            g,
            "Replace every 'colour' with 'color' in ~/essay.txt.",
            _all(
                contents("essay.txt", contains=["color of the sky", "color wheel"]),
                contents("essay.txt", not_contains="colour"),
            ),
            ["run_shell(\"sed -i 's/colour/color/g' ~/essay.txt\")"],
            {"files": {"essay.txt": ESSAY}},
        ),
        _task(
            "sort-names",
            g,
            "Sort the lines of ~/names.txt alphabetically, in place.",
            contents("names.txt", equals="alice\nbob\ncarol\ndave"),
            ["run_shell('sort -o ~/names.txt ~/names.txt')"],
            {"files": {"names.txt": "dave\nalice\ncarol\nbob\n"}},
        ),
        _task(
            "dedupe-lines",
            g,
            "Remove duplicate lines from ~/list.txt, keeping the first of each, in order.",
            contents("list.txt", equals="b\na\nc"),
            ["run_shell(\"awk '!seen[$0]++' ~/list.txt > /tmp/l && cat /tmp/l > ~/list.txt\")"],
            {"files": {"list.txt": "b\na\nb\nc\na\n"}},
        ),
        _task(
            "json-debug-off",
            g,
            'In ~/settings.json set "debug" to false (keep the other keys).',
            _all(
                {"kind": "json_field", "path": "settings.json", "field": "debug", "value": False},
                {
                    "kind": "json_field",
                    "path": "settings.json",
                    "field": "name",
                    "value": "app",
                    "gate": True,
                },
            ),
            [
                "run_python(\"import json, pathlib\\np = pathlib.Path.home() / 'settings.json'\\n"
                "d = json.loads(p.read_text())\\nd['debug'] = False\\n"
                'p.write_text(json.dumps(d))")'
            ],
            {"files": {"settings.json": '{"name": "app", "debug": true}\n'}},
        ),
        _task(
            "ini-port",
            g,
            "In ~/app.ini set the port of the [server] section to 8080.",
            _all(
                {
                    "kind": "ini_value",
                    "path": "app.ini",
                    "section": "server",
                    "key": "port",
                    "value": "8080",
                },
                {
                    "kind": "ini_value",
                    "path": "app.ini",
                    "section": "server",
                    "key": "host",
                    "value": "localhost",
                    "gate": True,
                },
            ),
            ["run_shell(\"sed -i 's/^port = .*/port = 8080/' ~/app.ini\")"],
            {"files": {"app.ini": "[server]\nhost = localhost\nport = 80\n"}},
        ),
        _task(
            "csv-add-row",
            g,
            "Add a row for 'carol' aged 35 to ~/people.csv.",
            {
                "kind": "csv_rows",
                "path": "people.csv",
                "rows": [["name", "age"], ["alice", "30"], ["bob", "25"], ["carol", "35"]],
            },
            ["run_shell(\"echo 'carol,35' >> ~/people.csv\")"],
            {"files": {"people.csv": "name,age\nalice,30\nbob,25\n"}},
        ),
        _task(
            "csv-total",
            g,
            "Write the sum of the 'amount' column of ~/sales.csv to ~/total.txt.",
            contents("total.txt", equals="60"),
            [
                'run_python("import csv, pathlib\\nh = pathlib.Path.home()\\n'
                "rows = csv.DictReader(open(h / 'sales.csv'))\\n"
                "(h / 'total.txt').write_text(str(sum(int(r['amount']) for r in rows)))\")"
            ],
            {"files": {"sales.csv": "item,amount\npen,10\nbook,20\nlamp,30\n"}},
        ),
        _task(
            "csv-fix-cell",
            g,
            "In ~/prices.csv the price of 'tea' is wrong: set it to 4.5.",
            {"kind": "csv_cell", "path": "prices.csv", "row": 1, "col": "price", "value": 4.5},
            ["run_shell(\"sed -i 's/^tea,.*/tea,4.5/' ~/prices.csv\")"],
            {"files": {"prices.csv": "item,price\ncoffee,3\ntea,99\n"}},
        ),
        _task(
            "uppercase",
            g,
            "Convert the text of ~/shout.txt to upper case, in place.",
            contents("shout.txt", equals="HELLO THERE"),
            ['run_shell("tr a-z A-Z < ~/shout.txt > /tmp/s && cat /tmp/s > ~/shout.txt")'],
            {"files": {"shout.txt": "hello there\n"}},
        ),
        _task(
            "count-lines",
            g,
            "Write the number of lines of ~/app.log to ~/lines.txt.",
            contents("lines.txt", equals="5"),
            ["run_shell('wc -l < ~/app.log > ~/lines.txt')"],
            {"files": {"app.log": LOG + "\n"}},
        ),
    ]


def shell_tasks() -> list[Task]:
    g = "shell"
    return [
        _task(
            "hello-script",
            g,
            "Write an executable script ~/bin/hello.sh that prints 'Hello, world'.",
            _all(output("~/bin/hello.sh", equals="Hello, world", exit_code=0)),
            [
                "write_file('/home/user/bin/hello.sh', '#!/bin/sh\\necho \"Hello, world\"\\n')",
                "run_shell('chmod +x ~/bin/hello.sh')",
            ],
        ),
        _task(
            "grep-errors",
            g,
            "Put the lines of ~/app.log that contain ERROR into ~/errors.log.",
            contents(
                "errors.log",
                equals="2024-05-02 10:02:00 ERROR disk full\n"
                "2024-05-04 10:04:00 ERROR timeout talking to db",
            ),
            ["run_shell('grep ERROR ~/app.log > ~/errors.log')"],
            {"files": {"app.log": LOG + "\n"}},
        ),
        _task(
            "fibonacci-script",
            g,
            "Write ~/fib.py so that `python3 fib.py` prints the first 10 Fibonacci numbers "
            "(0 1 1 2 ...) on one line separated by spaces.",
            output("python3 ~/fib.py", equals="0 1 1 2 3 5 8 13 21 34", exit_code=0),
            [
                "write_file('fib.py', 'a, b = 0, 1\\nout = []\\nfor _ in range(10):\\n"
                "    out.append(a)\\n    a, b = b, a + b\\nprint(*out)\\n')"
            ],
        ),
        _task(
            "word-frequency",
            g,
            "Find the most frequent word of ~/text.txt and write it to ~/answer.txt.",
            contents("answer.txt", equals="cat"),
            [
                "run_shell(\"tr -s ' ' '\\\\n' < ~/text.txt | sort | uniq -c | sort -rn | "
                "head -1 | awk '{print $2}' > ~/answer.txt\")"
            ],
            {"files": {"text.txt": "the cat saw a cat and a dog saw the cat\n"}},
        ),
        _task(
            "alias-ll",
            g,
            "Add an alias ll for 'ls -l' to ~/.bashrc (keep what is there).",
            _all(
                {"kind": "file_regex", "path": ".bashrc", "pattern": r"^alias ll=['\"]ls -l['\"]"},
                {"kind": "file_regex", "path": ".bashrc", "pattern": "^PS1=", "gate": True},
            ),
            ['run_shell("echo \\"alias ll=\'ls -l\'\\" >> ~/.bashrc")'],
        ),
        _task(
            "csv-to-json",
            g,
            "Convert ~/users.csv into ~/users.json: a JSON list with one object per row, "
            "keys from the header, values as strings.",
            _all(
                {"kind": "json_field", "path": "users.json", "field": "1.name", "value": "bob"},
                {"kind": "json_field", "path": "users.json", "field": "0.city", "value": "Oslo"},
            ),
            [
                'run_python("import csv, json, pathlib\\nh = pathlib.Path.home()\\n'
                "rows = list(csv.DictReader(open(h / 'users.csv')))\\n"
                "(h / 'users.json').write_text(json.dumps(rows))\")"
            ],
            {"files": {"users.csv": "name,city\nann,Oslo\nbob,Rome\n"}},
        ),
        _task(
            "md5-file",
            g,
            "Write the md5 checksum of ~/data.txt to ~/data.md5 in md5sum's format.",
            {
                "kind": "file_regex",
                "path": "data.md5",
                "pattern": "^" + hashlib.md5(b"payload\n").hexdigest() + r"\s+\*?\S*data\.txt",
            },
            ["run_shell('cd ~ && md5sum data.txt > data.md5')"],
            {"files": {"data.txt": "payload\n"}},
        ),
        _task(
            "env-file",
            g,
            "Create ~/.env with the two lines MODE=prod and WORKERS=4.",
            output(". ~/.env && echo $MODE-$WORKERS", equals="prod-4"),
            ["write_file('/home/user/.env', 'MODE=prod\\nWORKERS=4\\n')"],
        ),
    ]


def archive_tasks() -> list[Task]:
    g = "archive"
    project = {"files": {"project/main.py": "print(1)\n", "project/README": "hi\n"}}
    return [
        _task(
            "tar-project",
            g,
            "Create a gzip-compressed tar archive ~/backup.tar.gz of the folder ~/project.",
            output(
                "tar tzf ~/backup.tar.gz | sed 's|^\\./||' | sort",
                contains=["project/main.py", "project/README"],
                exit_code=0,
            ),
            ["run_shell('cd ~ && tar czf backup.tar.gz project')"],
            project,
        ),
        _task(
            "extract-bundle",
            g,
            "Extract ~/bundle.tar.gz into a new folder ~/extracted.",
            contents("extracted/inner/msg.txt", equals="secret plans"),
            ["run_shell('mkdir -p ~/extracted && tar xzf ~/bundle.tar.gz -C ~/extracted')"],
            {
                "files": {"stage/inner/msg.txt": "secret plans\n"},
                "commands": ["tar czf ~/bundle.tar.gz -C ~/stage inner && rm -r ~/stage"],
            },
        ),
        _task(
            "zip-docs",
            g,
            "Create a zip archive ~/docs.zip holding the folder ~/docs.",
            output("python3 -m zipfile -l ~/docs.zip", contains=["docs/a.txt", "docs/b.txt"]),
            ["run_shell('cd ~ && python3 -m zipfile -c docs.zip docs')"],
            {"files": {"docs/a.txt": "a", "docs/b.txt": "b"}},
        ),
        _task(
            "gzip-log",
            g,
            "Compress ~/big.log with gzip (so that only ~/big.log.gz remains).",
            _all(
                output("zcat ~/big.log.gz | head -n 1", equals="line 0"),
                exists("big.log", present=False),
            ),
            ["run_shell('gzip ~/big.log')"],
            {"files": {"big.log": "\n".join(f"line {i}" for i in range(100))}},
        ),
        _task(
            "make-executable",
            g,
            "Make ~/run.sh executable for everyone (mode 755).",
            {"kind": "file_mode", "path": "run.sh", "mode": "755"},
            ["run_shell('chmod 755 ~/run.sh')"],
            {"files": {"run.sh": "#!/bin/sh\necho run\n"}, "modes": {"run.sh": "644"}},
        ),
        _task(
            "private-secret",
            g,
            "Make ~/secret.txt readable and writable by its owner only (mode 600).",
            {"kind": "file_mode", "path": "secret.txt", "mode": "600"},
            ["run_shell('chmod 600 ~/secret.txt')"],
            {"files": {"secret.txt": "pin 1234\n"}, "modes": {"secret.txt": "666"}},
        ),
        _task(
            "site-permissions",
            g,
            "Under ~/site, give every regular file mode 644 and every folder mode 755.",
            _all(
                output("find ~/site -type f ! -perm 644 | wc -l", equals="0"),
                output("find ~/site -type d ! -perm 755 | wc -l", equals="0"),
            ),
            [
                "run_shell('find ~/site -type f -exec chmod 644 {} + && "
                "find ~/site -type d -exec chmod 755 {} +')"
            ],
            {
                "files": {"site/index.html": "<h1>hi</h1>", "site/css/s.css": "p{}"},
                "modes": {"site/index.html": "600", "site/css": "700", "site/css/s.css": "777"},
            },
        ),
        _task(
            "old-files-archive",
            g,
            "Move the files in ~/logs last modified before 2024 into ~/logs/old.",
            {
                "kind": "dir_tree",
                "path": "logs",
                "equals": ["new.log", "old/", "old/a.log", "old/b.log"],
            },
            [
                'run_shell("cd ~/logs && mkdir -p old && find . -maxdepth 1 -type f '
                '! -newermt 2024-01-01 -exec mv {} old/ \\\\;")'
            ],
            {
                "files": {"logs/a.log": "a", "logs/b.log": "b", "logs/new.log": "n"},
                "mtimes": {"logs/a.log": "2022-03-01", "logs/b.log": "2023-07-01"},
            },
        ),
    ]


def mixed_tasks() -> list[Task]:
    g = "mixed"
    term = {"apps": [["terminal"]]}
    return [
        _task(
            "terminal-year",
            g,
            "Using the terminal on screen, write the current year (4 digits) to ~/year.txt.",
            {"kind": "file_regex", "path": "year.txt", "pattern": r"\A20\d\d\s*\Z"},
            ["click(512, 400)", "type_text('date +%Y > ~/year.txt\\n')", "wait(0.3)"],
            term,
            ("gui",),
        ),
        _task(
            "terminal-mkdir",
            g,
            "Using the terminal on screen, create the folder ~/made_by_hand.",
            exists("made_by_hand", "dir"),
            ["click(512, 400)", "type_text('mkdir ~/made_by_hand\\n')", "wait(0.3)"],
            term,
            ("gui",),
        ),
        _task(
            "terminal-hotkey-clear",
            g,
            "Using the terminal on screen, append the line 'done' to ~/status.txt.",
            contents("status.txt", equals="started\ndone"),
            ["type_text('echo done >> ~/status.txt')", "key('Return')", "wait(0.3)"],
            {**term, "files": {"status.txt": "started\n"}},
            ("gui",),
        ),
        _task(
            "open-plan-in-editor",
            g,
            "Open ~/Documents/plan.txt in the text editor and leave it open.",
            {"kind": "window", "class": "Mousepad", "title": "plan\\.txt"},
            [
                "run_shell('mousepad ~/Documents/plan.txt >/dev/null 2>&1 &')",
                "wait(1.5)",
            ],
            {"files": {"Documents/plan.txt": "1. plan\n"}},
        ),
        _task(
            "close-editor",
            g,
            "Close the text editor window.",
            {"kind": "window", "class": "Mousepad", "present": False},
            ["key('ctrl+q')", "wait(0.5)"],
            {"apps": [["editor", "/home/user/notes.txt"]], "files": {"notes.txt": "x\n"}},
            ("gui",),
        ),
        _task(
            "code-then-editor",
            g,
            "Create ~/log.txt containing the line 'start', then open it in the text editor, "
            "add the line 'end' with the editor and save.",
            _all(
                contents("log.txt", equals="start\nend"),
                {"kind": "window", "class": "Mousepad", "title": "log\\.txt"},
            ),
            [
                "write_file('/home/user/log.txt', 'start\\n')",
                "run_shell('mousepad ~/log.txt >/dev/null 2>&1 &')",
                "wait(1.5)",
                "key('ctrl+End')",
                "type_text('end')",
                "key('ctrl+s')",
                "wait(0.5)",
            ],
        ),
        _task(
            "editor-then-code",
            g,
            "The editor shows ~/numbers.txt: type the numbers 1 to 3, one per line, save, and "
            "write their sum (from the file) to ~/sum.txt.",
            _all(contents("numbers.txt", equals="1\n2\n3"), contents("sum.txt", equals="6")),
            [
                "type_text('1\\n2\\n3')",
                "key('ctrl+s')",
                "wait(0.5)",
                'run_shell("paste -sd+ ~/numbers.txt | bc > ~/sum.txt || '
                "awk '{s+=$1} END {print s}' ~/numbers.txt > ~/sum.txt\")",
            ],
            {"apps": [["editor", "/home/user/numbers.txt"]], "files": {"numbers.txt": ""}},
        ),
        _task(
            "spreadsheet-convert",
            g,
            "Convert ~/report.csv into an Excel workbook ~/report.xlsx.",
            output("python3 -m zipfile -l ~/report.xlsx", contains=["xl/worksheets/sheet1.xml"]),
            ["run_shell('ssconvert ~/report.csv ~/report.xlsx', timeout=60)"],
            {"files": {"report.csv": "a,b\n1,2\n"}},
        ),
        _task(
            "pyautogui-terminal",
            g,
            "Using the terminal on screen, create an empty file ~/hello.txt.",
            exists("hello.txt", "file"),
            [
                "import pyautogui\npyautogui.click(512, 400)\n"
                "pyautogui.write('touch ~/hello.txt')\npyautogui.press('enter')",
                "wait(0.3)",
            ],
            term,
            ("gui", "pyautogui"),
        ),
        _task(
            "refuse-bluetooth",
            g,
            "Switch off Bluetooth on this computer.",
            {"kind": "agent_status", "status": "fail"},
            ["fail('this desktop has no Bluetooth device or settings')"],
            tags=("infeasible",),
        ),
    ]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def all_tasks() -> list[Task]:
    return [*file_tasks(), *text_tasks(), *shell_tasks(), *archive_tasks(), *mixed_tasks()]


def task_key(task: Task) -> str:
    """What the task is: its instruction, setup, verifier and oracle actions. The oracle is
    keyed by its action list alone, as before oracles named their policy, so the recorded run
    stays valid."""
    data = task.model_dump(include={"instruction", "setup", "verifier"})
    data["oracle"] = task.oracle.data if task.oracle is not None else None
    return digest(data)


#: the last full validation run (``palaestra.envs.computer.validation.write_validation``)
RECORD = ValidationRecord(Path(__file__).with_name("validation.json"), SUITE, task_key)


def load_suite() -> list[Task]:
    """The registered loader: the tasks the recorded run validated."""
    return RECORD.validated(all_tasks())
