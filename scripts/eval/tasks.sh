# Small-task evaluation: the tasks. Sourced by scripts/eval-local.sh.
#
# Each task is three functions: setup_<name> (run in an empty git workspace), prompt_<name>
# (prints the request), check_<name> (run in the workspace after the agent; exit 0 = pass).
# Checks look only at files and behaviour, never at the transcript.
TASKS="fix_bug new_script rename multi_config count_rows git_commit safe_delete add_function fix_script append_line"

setup_fix_bug() {
  cat > calc.py <<'PY'
def add(a, b):
    return a - b


def mul(a, b):
    return a * b
PY
  cat > test_calc.py <<'PY'
import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)


if __name__ == "__main__":
    unittest.main()
PY
}
prompt_fix_bug() { echo "The tests in test_calc.py fail. Find the bug in calc.py and fix it, then run the tests."; }
check_fix_bug() { python3 -m unittest -q test_calc >/dev/null 2>&1 && grep -q "def mul" calc.py; }

setup_new_script() { printf 'alpha\nbeta\ngamma\ndelta\n' > words.txt; }
prompt_new_script() { echo "Create count.py that prints how many lines words.txt has (just the number), then run it."; }
check_new_script() { [ "$(python3 count.py 2>/dev/null | tr -d '[:space:]')" = "4" ]; }

setup_rename() {
  cat > greetings.py <<'PY'
def greet(name):
    return "Hello, " + name + "!"
PY
  cat > main.py <<'PY'
from greetings import greet

print(greet("world"))
PY
}
prompt_rename() { echo "Rename the function greet to welcome in greetings.py and everywhere it is used."; }
check_rename() { ! grep -rq "greet(" --include=*.py . && grep -q "def welcome" greetings.py && [ "$(python3 main.py 2>/dev/null)" = "Hello, world!" ]; }

setup_multi_config() { printf '{\n  "name": "shop",\n  "port": 8080,\n  "debug": false\n}\n' > config.json; }
prompt_multi_config() { echo "In config.json, change the port to 9090 and turn debug on."; }
check_multi_config() { python3 -c 'import json,sys; c=json.load(open("config.json")); sys.exit(0 if c=={"name":"shop","port":9090,"debug":True} else 1)' 2>/dev/null; }

setup_count_rows() {
  printf 'id,region,amount\n1,EU,10\n2,US,20\n3,EU,5\n4,APAC,7\n5,EU,1\n6,US,3\n' > sales.csv
}
prompt_count_rows() { echo "How many rows of sales.csv have the region EU? Write only the number into answer.txt."; }
check_count_rows() { [ "$(cat answer.txt 2>/dev/null | tr -d "[:space:]")" = "3" ]; }

setup_git_commit() {
  git config user.email eval@example.com; git config user.name eval
  echo "# shop" > README.md; git add README.md; git commit -qm init
  printf '# shop\n\nA small shop.\n' > README.md
}
prompt_git_commit() { echo "Commit the change to README.md with the message 'docs: describe the shop'."; }
check_git_commit() { [ "$(git log -1 --format=%s 2>/dev/null)" = "docs: describe the shop" ] && [ -z "$(git status --porcelain)" ]; }

setup_safe_delete() {
  mkdir -p build/sub; touch build/a.tmp build/b.tmp build/sub/c.tmp build/keep.txt build/sub/keep.o notes.tmp
}
prompt_safe_delete() { echo "Delete every .tmp file under build/ (also in its subdirectories), and nothing else."; }
check_safe_delete() { [ -z "$(find build -name '*.tmp')" ] && [ -f build/keep.txt ] && [ -f build/sub/keep.o ] && [ -f notes.tmp ]; }

setup_add_function() { printf 'def square(n):\n    return n * n\n' > mathutil.py; }
prompt_add_function() { echo "Add a function is_even(n) to mathutil.py that returns True for even numbers and False otherwise."; }
check_add_function() { python3 -c 'from mathutil import is_even, square; import sys; sys.exit(0 if is_even(4) is True and is_even(7) is False and square(3)==9 else 1)' 2>/dev/null; }

setup_fix_script() { printf '#!/bin/sh\nname=world\nech "hello $name"\n' > hello.sh; }
prompt_fix_script() { echo "sh hello.sh fails. Fix hello.sh so it prints hello world."; }
check_fix_script() { [ "$(sh hello.sh 2>/dev/null)" = "hello world" ]; }

setup_append_line() { printf 'apple\ncherry\n' > fruits.txt; }
prompt_append_line() { echo "Add a line banana at the end of fruits.txt."; }
check_append_line() { [ "$(cat fruits.txt 2>/dev/null)" = "$(printf 'apple\ncherry\nbanana')" ]; }

# Reference solutions, for `scripts/eval-local.sh --self-test` (each check must fail before
# and pass after).
solve_fix_bug() { sed -i 's/return a - b/return a + b/' calc.py; }
solve_new_script() { printf 'print(sum(1 for _ in open("words.txt")))\n' > count.py; }
solve_rename() { sed -i "s/\\bgreet\\b/welcome/g" greetings.py main.py; }
solve_multi_config() { printf '{"name": "shop", "port": 9090, "debug": true}\n' > config.json; }
solve_count_rows() { echo 3 > answer.txt; }
solve_git_commit() { git commit -qam 'docs: describe the shop'; }
solve_safe_delete() { find build -name '*.tmp' -delete; }
solve_add_function() { printf 'def is_even(n):\n    return n %% 2 == 0\n' >> mathutil.py; }
solve_fix_script() { sed -i 's/^ech /echo /' hello.sh; }
solve_append_line() { echo banana >> fruits.txt; }
