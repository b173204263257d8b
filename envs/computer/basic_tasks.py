"""The ``computer-basic`` suite's tasks, as data: one row per task, in five groups (file
management, text editing, shell and scripting, archives and permissions, mixed GUI + code),
written with the helpers of :mod:`palaestra.envs.computer.rows`. :mod:`.suites` makes tasks of
them."""

from __future__ import annotations

import hashlib

from palaestra.envs.computer.rows import (
    ABSENT,
    TERMINAL,
    Row,
    all_of,
    answer,
    cells,
    check,
    chmod,
    contents,
    editor,
    exists,
    gate,
    holding,
    in_editor,
    in_terminal,
    intact,
    moved,
    output,
    packed,
    process,
    rewrite,
    row,
    sh,
    sha,
    window,
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
ESSAY = "The colour of the sky.\nA colour wheel.\n"

TABLE: dict[str, list[Row]] = {
    "files": [
        row(
            "make-project-dir",
            "Create the folder ~/projects/alpha (with its parent).",
            exists("projects/alpha", "dir"),
            sh("mkdir -p ~/projects/alpha"),
        ),
        moved(
            "move-todo",
            "Move the file todo.txt from the Desktop folder into the Documents folder.",
            "Desktop/todo.txt",
            "call the bank\n",
            contents("Documents/todo.txt", equals="call the bank"),
            sh("mv ~/Desktop/todo.txt ~/Documents/"),
        ),
        row(
            "backup-notes",
            "Make a copy of ~/notes.txt at ~/backup/notes.txt (keep the original).",
            all_of(
                check("checksum", "backup/notes.txt", sha256=sha("keep me\n")),
                gate(exists("notes.txt", "file")),
            ),
            sh("mkdir -p ~/backup && cp ~/notes.txt ~/backup/"),
            files={"notes.txt": "keep me\n"},
        ),
        moved(
            "rename-draft",
            "Rename ~/Documents/draft.md to final.md in the same folder.",
            "Documents/draft.md",
            "# Report\n",
            contents("Documents/final.md", equals="# Report"),
            sh("mv ~/Documents/draft.md ~/Documents/final.md"),
        ),
        row(
            "delete-tmp-files",
            "Delete every .tmp file in ~/work (and its subfolders); keep all other files.",
            all_of(
                check("dir_tree", "work", equals=["a.txt", "sub/", "sub/b.txt"]),
                *intact({"work/a.txt": "a", "work/sub/b.txt": "b"}),
            ),
            sh("find ~/work -name '*.tmp' -delete"),
            files={
                "work/a.txt": "a",
                "work/x.tmp": "",
                "work/sub/b.txt": "b",
                "work/sub/y.tmp": "",
            },
        ),
        row(
            "sort-by-extension",
            "In ~/inbox, move the .jpg files into ~/inbox/images and the .pdf files into "
            "~/inbox/docs (create the folders).",
            all_of(
                check(
                    "dir_tree",
                    "inbox",
                    equals=["docs/", "docs/c.pdf", "images/", "images/a.jpg", "images/b.jpg"],
                ),
                *holding({"inbox/images/a.jpg": "A", "inbox/images/b.jpg": "B"}),
                *holding({"inbox/docs/c.pdf": "C"}),
            ),
            sh("cd ~/inbox && mkdir -p images docs && mv *.jpg images/ && mv *.pdf docs/"),
            files={"inbox/a.jpg": "A", "inbox/b.jpg": "B", "inbox/c.pdf": "C"},
        ),
        row(
            "link-latest",
            "Create a symbolic link ~/latest that points to ~/Documents/report.txt.",
            all_of(
                exists("latest", "symlink"),
                output("readlink -f ~/latest", equals="/home/user/Documents/report.txt"),
                *intact({"Documents/report.txt": "Q3 numbers\n"}),
            ),
            sh("ln -s ~/Documents/report.txt ~/latest"),
            files={"Documents/report.txt": "Q3 numbers\n"},
        ),
        answer(
            "largest-file",
            "Find the largest file in ~/data and write just its file name to ~/answer.txt.",
            "answer.txt",
            "big.bin",
            sh("ls -S ~/data | head -n 1 > ~/answer.txt"),
            others=("small.txt", "m"),
            files={"data/small.txt": "x" * 10, "data/big.bin": "y" * 5000, "data/m": "z" * 99},
        ),
        answer(
            "count-files",
            "Count the files in ~/inbox and write the number to ~/count.txt.",
            "count.txt",
            "4",
            sh("ls ~/inbox | wc -l > ~/count.txt"),
            normalize="number",
            files={f"inbox/f{i}.txt": str(i) for i in range(4)},
        ),
        row(
            "remove-empty-dirs",
            "Remove every empty folder under ~/tree (folders that hold files stay).",
            all_of(
                check("dir_tree", "tree", equals=["keep/", "keep/file.txt"]),
                *intact({"tree/keep/file.txt": "x"}),
            ),
            sh("find ~/tree -mindepth 1 -type d -empty -delete"),
            files={"tree/keep/file.txt": "x"},
            dirs=["tree/e1", "tree/e2/e3"],
        ),
    ],
    "text": [
        in_editor(
            "append-line-in-editor",
            "Add a last line 'buy milk' to ~/notes.txt and save it (the text editor on screen "
            "shows it).",
            "eggs\nbread",
            "eggs\nbread\nbuy milk",
            ["key('ctrl+End')", "type_text('\\nbuy milk')"],
        ),
        in_editor(
            "heading-in-editor",
            "Insert '# Groceries' as a new first line of ~/notes.txt and save it (the text editor "
            "on screen shows it).",
            "eggs",
            "# Groceries\neggs",
            ["key('ctrl+Home')", "type_text('# Groceries\\n')"],
        ),
        in_editor(
            "rewrite-in-editor",
            "Delete the line 'DELETE ME' from ~/notes.txt and save it (the text editor on screen "
            "shows it).",
            "first\nDELETE ME\nlast",
            "first\nlast",
            ["key('ctrl+Home')", "key('Down')", "key('shift+Down')", "key('Delete')"],
        ),
        row(
            "american-spelling",
            "Replace every 'colour' with 'color' in ~/essay.txt.",
            all_of(
                contents("essay.txt", contains=["color of the sky", "color wheel"]),
                gate(contents("essay.txt", not_contains="colour")),
            ),
            sh("sed -i 's/colour/color/g' ~/essay.txt"),
            files={"essay.txt": ESSAY},
        ),
        rewrite(
            "sort-names",
            "Sort the lines of ~/names.txt alphabetically, in place.",
            "names.txt",
            "dave\nalice\ncarol\nbob\n",
            "alice\nbob\ncarol\ndave",
            sh("sort -o ~/names.txt ~/names.txt"),
        ),
        rewrite(
            "dedupe-lines",
            "Remove duplicate lines from ~/list.txt, keeping the first of each, in order.",
            "list.txt",
            "b\na\nb\nc\na\n",
            "b\na\nc",
            sh("awk '!seen[$0]++' ~/list.txt > /tmp/l && cat /tmp/l > ~/list.txt"),
        ),
        row(
            "json-debug-off",
            'In ~/settings.json set "debug" to false (keep the other keys).',
            all_of(
                check("json_field", "settings.json", field="debug", value=False),
                gate(check("json_field", "settings.json", field="name", value="app")),
            ),
            [
                "run_python(\"import json, pathlib\\np = pathlib.Path.home() / 'settings.json'\\n"
                "d = json.loads(p.read_text())\\nd['debug'] = False\\n"
                'p.write_text(json.dumps(d))")'
            ],
            files={"settings.json": '{"name": "app", "debug": true}\n'},
        ),
        row(
            "ini-port",
            "In ~/app.ini set the port of the [server] section to 8080.",
            all_of(
                check("ini_value", "app.ini", section="server", key="port", value="8080"),
                gate(
                    check("ini_value", "app.ini", section="server", key="host", value="localhost")
                ),
            ),
            sh("sed -i 's/^port = .*/port = 8080/' ~/app.ini"),
            files={"app.ini": "[server]\nhost = localhost\nport = 80\n"},
        ),
        row(
            "csv-add-row",
            "Add a row for 'carol' aged 35 to ~/people.csv.",
            check(
                "csv_rows",
                "people.csv",
                rows=[["name", "age"], ["alice", "30"], ["bob", "25"], ["carol", "35"]],
            ),
            sh("echo 'carol,35' >> ~/people.csv"),
            files={"people.csv": "name,age\nalice,30\nbob,25\n"},
        ),
        answer(
            "csv-total",
            "Write the sum of the 'amount' column of ~/sales.csv to ~/total.txt.",
            "total.txt",
            "60",
            normalize="number",
            oracle=[
                'run_python("import csv, pathlib\\nh = pathlib.Path.home()\\n'
                "rows = csv.DictReader(open(h / 'sales.csv'))\\n"
                "(h / 'total.txt').write_text(str(sum(int(r['amount']) for r in rows)))\")"
            ],
            files={"sales.csv": "item,amount\npen,10\nbook,20\nlamp,30\n"},
        ),
        row(
            "csv-fix-cell",
            "In ~/prices.csv the price of 'tea' is wrong: set it to 4.5.",
            check("csv_cell", "prices.csv", row=1, col="price", value=4.5),
            sh("sed -i 's/^tea,.*/tea,4.5/' ~/prices.csv"),
            files={"prices.csv": "item,price\ncoffee,3\ntea,99\n"},
        ),
        rewrite(
            "uppercase",
            "Convert the text of ~/shout.txt to upper case, in place.",
            "shout.txt",
            "hello there\n",
            "HELLO THERE",
            ['run_shell("tr a-z A-Z < ~/shout.txt > /tmp/s && cat /tmp/s > ~/shout.txt")'],
        ),
        answer(
            "count-lines",
            "Write the number of lines of ~/app.log to ~/lines.txt.",
            "lines.txt",
            "5",
            sh("wc -l < ~/app.log > ~/lines.txt"),
            normalize="number",
            files={"app.log": LOG + "\n"},
        ),
    ],
    "shell": [
        row(
            "hello-script",
            "Write an executable script ~/bin/hello.sh that prints 'Hello, world'.",
            all_of(output("~/bin/hello.sh", equals="Hello, world", exit_code=0)),
            [
                "write_file('/home/user/bin/hello.sh', '#!/bin/sh\\necho \"Hello, world\"\\n')",
                "run_shell('chmod +x ~/bin/hello.sh')",
            ],
        ),
        row(
            "grep-errors",
            "Put the lines of ~/app.log that contain ERROR into ~/errors.log.",
            # every line asked, and only those: an output, not an answer
            all_of(
                contents(
                    "errors.log",
                    equals="2024-05-02 10:02:00 ERROR disk full\n"
                    "2024-05-04 10:04:00 ERROR timeout talking to db",
                ),
                *intact({"app.log": LOG + "\n"}),
            ),
            sh("grep ERROR ~/app.log > ~/errors.log"),
            files={"app.log": LOG + "\n"},
        ),
        row(
            "fibonacci-script",
            "Write ~/fib.py so that `python3 fib.py` prints the first 10 Fibonacci numbers "
            "(0 1 1 2 ...) on one line separated by spaces.",
            output("python3 ~/fib.py", equals="0 1 1 2 3 5 8 13 21 34", exit_code=0),
            [
                "write_file('fib.py', 'a, b = 0, 1\\nout = []\\nfor _ in range(10):\\n"
                "    out.append(a)\\n    a, b = b, a + b\\nprint(*out)\\n')"
            ],
        ),
        answer(
            "word-frequency",
            "Find the most frequent word of ~/text.txt and write it to ~/answer.txt.",
            "answer.txt",
            "cat",
            others=("the", "saw", "a", "and", "dog"),
            oracle=sh(
                "tr -s ' ' '\\n' < ~/text.txt | sort | uniq -c | sort -rn | "
                "head -1 | awk '{print $2}' > ~/answer.txt"
            ),
            files={"text.txt": "the cat saw a cat and a dog saw the cat\n"},
        ),
        row(
            "alias-ll",
            "Add an alias ll for 'ls -l' to ~/.bashrc (keep what is there).",
            all_of(
                check("file_regex", ".bashrc", pattern=r"^alias ll=['\"]ls -l['\"]"),
                gate(check("file_regex", ".bashrc", pattern="^PS1=")),
            ),
            ['run_shell("echo \\"alias ll=\'ls -l\'\\" >> ~/.bashrc")'],
        ),
        row(
            "csv-to-json",
            "Convert ~/users.csv into ~/users.json: a JSON list with one object per row, "
            "keys from the header, values as strings.",
            all_of(
                check("json_field", "users.json", field="1.name", value="bob"),
                check("json_field", "users.json", field="0.city", value="Oslo"),
            ),
            [
                'run_python("import csv, json, pathlib\\nh = pathlib.Path.home()\\n'
                "rows = list(csv.DictReader(open(h / 'users.csv')))\\n"
                "(h / 'users.json').write_text(json.dumps(rows))\")"
            ],
            files={"users.csv": "name,city\nann,Oslo\nbob,Rome\n"},
        ),
        row(
            "md5-file",
            "Write the md5 checksum of ~/data.txt to ~/data.md5 in md5sum's format.",
            check(
                "file_regex",
                "data.md5",
                pattern="^" + hashlib.md5(b"payload\n").hexdigest() + r"\s+\*?\S*data\.txt",
            ),
            sh("cd ~ && md5sum data.txt > data.md5"),
            files={"data.txt": "payload\n"},
        ),
        row(
            "env-file",
            "Create ~/.env with the two lines MODE=prod and WORKERS=4.",
            output(". ~/.env && echo $MODE-$WORKERS", equals="prod-4"),
            ["write_file('/home/user/.env', 'MODE=prod\\nWORKERS=4\\n')"],
        ),
    ],
    "archive": [
        packed(
            "tar-project",
            "Create a gzip-compressed tar archive ~/backup.tar.gz of the folder ~/project.",
            "~/backup.tar.gz",
            {"project/main.py": "print(1)\n", "project/README": "hi\n"},
            "cd ~ && tar czf backup.tar.gz project",
        ),
        row(
            "extract-bundle",
            "Extract ~/bundle.tar.gz into a new folder ~/extracted.",
            contents("extracted/inner/msg.txt", equals="secret plans"),
            sh("mkdir -p ~/extracted && tar xzf ~/bundle.tar.gz -C ~/extracted"),
            files={"stage/inner/msg.txt": "secret plans\n"},
            commands=["tar czf ~/bundle.tar.gz -C ~/stage inner && rm -r ~/stage"],
        ),
        packed(
            "zip-docs",
            "Create a zip archive ~/docs.zip holding the folder ~/docs.",
            "~/docs.zip",
            {"docs/a.txt": "a", "docs/b.txt": "b"},
            "cd ~ && python3 -m zipfile -c docs.zip docs",
        ),
        moved(
            "gzip-log",
            "Compress ~/big.log with gzip (so that only ~/big.log.gz remains).",
            "big.log",
            "\n".join(f"line {i}" for i in range(100)),
            # every line, not the first: a log cut to its head is no compressed log
            output(
                "zcat ~/big.log.gz | sha256sum | cut -c1-64",
                equals=sha("\n".join(f"line {i}" for i in range(100))),
            ),
            sh("gzip ~/big.log"),
        ),
        chmod(
            "make-executable",
            "Make ~/run.sh executable for everyone (mode 755).",
            "run.sh",
            "#!/bin/sh\necho run\n",
            "644",
            "755",
        ),
        chmod(
            "private-secret",
            "Make ~/secret.txt readable and writable by its owner only (mode 600).",
            "secret.txt",
            "pin 1234\n",
            "666",
            "600",
        ),
        row(
            "site-permissions",
            "Under ~/site, give every regular file mode 644 and every folder mode 755.",
            all_of(
                output("find ~/site -type f ! -perm 644 | wc -l", equals="0"),
                output("find ~/site -type d ! -perm 755 | wc -l", equals="0"),
                *intact({"site/index.html": "<h1>hi</h1>", "site/css/s.css": "p{}"}),
            ),
            sh(
                "find ~/site -type f -exec chmod 644 {} + && "
                "find ~/site -type d -exec chmod 755 {} +"
            ),
            files={"site/index.html": "<h1>hi</h1>", "site/css/s.css": "p{}"},
            modes={"site/index.html": "600", "site/css": "700", "site/css/s.css": "777"},
        ),
        row(
            "old-logs",
            "Move the files in ~/logs last modified before 2024 into ~/logs/old.",
            all_of(
                check("dir_tree", "logs", equals=["new.log", "old/", "old/a.log", "old/b.log"]),
                *holding({"logs/old/a.log": "a", "logs/old/b.log": "b", "logs/new.log": "n"}),
            ),
            [
                'run_shell("cd ~/logs && mkdir -p old && find . -maxdepth 1 -type f '
                '! -newermt 2024-01-01 -exec mv {} old/ \\\\;")'
            ],
            files={"logs/a.log": "a", "logs/b.log": "b", "logs/new.log": "n"},
            mtimes={"logs/a.log": "2022-03-01", "logs/b.log": "2023-07-01"},
        ),
    ],
    "mixed": [
        in_terminal(
            "terminal-year",
            "Write the current year (4 digits) to ~/year.txt; a terminal is open on screen.",
            check("file_regex", "year.txt", pattern=r"\A20\d\d\s*\Z"),
            "date +%Y > ~/year.txt\n",
        ),
        in_terminal(
            "terminal-mkdir",
            "Create the folder ~/made_by_hand; a terminal is open on screen.",
            exists("made_by_hand", "dir"),
            "mkdir ~/made_by_hand\n",
        ),
        rewrite(
            "terminal-hotkey-clear",
            "Append the line 'done' to ~/status.txt; a terminal is open on screen.",
            "status.txt",
            "started\n",
            "started\ndone",
            ["type_text('echo done >> ~/status.txt')", "key('Return')", "wait(0.3)"],
            tags=("gui",),
            apps=TERMINAL,
        ),
        row(
            "open-plan-in-editor",
            "Open ~/Documents/plan.txt in the text editor and leave it open.",
            all_of(
                window("mousepad", title="plan\\.txt", shows="Documents/plan.txt"),
                *intact({"Documents/plan.txt": "1. plan\n"}),
            ),
            # a loaded machine may take more than a second to show the editor and its file
            ["run_shell('mousepad ~/Documents/plan.txt >/dev/null 2>&1 &')", "wait(3.0)"],
            files={"Documents/plan.txt": "1. plan\n"},
        ),
        row(
            "close-editor",
            "Close the text editor window.",
            window("mousepad", present=False),
            ["key('ctrl+q')", "wait(0.5)"],
            tags=("gui",),
            apps=editor("notes.txt"),
            files={"notes.txt": "x\n"},
        ),
        row(
            "log-start-end",
            "Create ~/log.txt containing the line 'start', then add the line 'end' to it and "
            "save it (the text editor is there to use).",
            # not "leave it open in the editor": a save in the editor replaces the file (a new
            # inode) and the editor then watches only its folder, so after a save nothing but
            # the title (any X client's to set) would say which file it shows
            contents("log.txt", equals="start\nend"),
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
        row(
            "numbers-sum",
            "Put the numbers 1 to 3 in ~/numbers.txt (the editor on screen shows it), one per "
            "line, save it, and write their sum (from the file) to ~/sum.txt.",
            all_of(contents("numbers.txt", equals="1\n2\n3"), contents("sum.txt", equals="6")),
            [
                "type_text('1\\n2\\n3')",
                "key('ctrl+s')",
                "wait(0.5)",
                'run_shell("paste -sd+ ~/numbers.txt | bc > ~/sum.txt || '
                "awk '{s+=$1} END {print s}' ~/numbers.txt > ~/sum.txt\")",
            ],
            apps=editor("numbers.txt"),
            files={"numbers.txt": ""},
        ),
        row(
            "spreadsheet-convert",
            "Convert ~/report.csv into an Excel workbook ~/report.xlsx.",
            cells("~/report.xlsx", {"A1": "a", "B1": "b", "A2": "1", "B2": "2"}),
            ["run_shell('ssconvert ~/report.csv ~/report.xlsx', timeout=60)"],
            files={"report.csv": "a,b\n1,2\n"},
        ),
        row(
            "touch-hello",
            "Create an empty file ~/hello.txt; a terminal is open on screen.",
            exists("hello.txt", "file"),
            [
                "import pyautogui\npyautogui.click(512, 400)\n"
                "pyautogui.write('touch ~/hello.txt')\npyautogui.press('enter')",
                "wait(0.3)",
            ],
            tags=("gui", "pyautogui"),
            apps=TERMINAL,
        ),
        row(
            "background-job",
            "Start the script ~/my_process.sh so that it keeps running in the background after "
            "your command returns.",
            process("bash", opens="my_process.sh"),
            sh(f"cd ~ && setsid ./my_process.sh {'>/dev/null 2>&1 </dev/null &'}"),
            files={"my_process.sh": "#!/bin/bash\nwhile true; do sleep 1; done\n"},
            modes={"my_process.sh": "755"},
        ),
        row(
            "bluetooth-off",
            "Switch off Bluetooth on this computer.",
            {
                "kind": "agent_status",
                "status": "fail",
                "reason_mentions": ["bluetooth"],
                "reason_causes": ABSENT,
            },
            ["fail('this desktop has no Bluetooth device or settings')"],
            tags=("infeasible",),
        ),
    ],
}
