#!/usr/bin/env python3
"""Lists the command-line flags of Megatron-LM's megatron/training/arguments.py.

Writes tests/cli/megatron_arguments.txt, the flag names the Megatron-LM export is checked
against (tests/cli/megatron_flags_test.cc): a header line naming the source, then every option
string starting with "--" of every add_argument(...) call in the file, sorted, one a line. The
file is parsed, not imported, so neither torch nor Megatron-LM needs to be installed.

Usage: python3 tools/megatron_argument_flags.py ARGUMENTS_PY COMMIT [HOW] > tests/cli/megatron_arguments.txt
  ARGUMENTS_PY  a copy of megatron/training/arguments.py of NVIDIA/Megatron-LM, or an excerpt of
                it holding its add_argument calls (any Python file: only those calls are read)
  COMMIT        the commit it was taken from, for the header line
  HOW           optional: how the copy was obtained, appended to the header line so that a
                reader knows what the list stands on
"""

import ast
import sys


def argument_flags(source):
    """The '--' option strings of every add_argument call in `source`."""
    flags = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        if not isinstance(node.func, ast.Attribute) or node.func.attr != "add_argument":
            continue
        for argument in node.args:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                if argument.value.startswith("--"):
                    flags.add(argument.value)
    return sorted(flags)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    path, commit = sys.argv[1], sys.argv[2]
    how = f"; {sys.argv[3]}" if len(sys.argv) == 4 else ""
    with open(path, encoding="utf-8") as source:
        flags = argument_flags(source.read())
    if not flags:
        sys.exit(f"{path}: no add_argument('--flag', ...) calls found")
    print(f"# NVIDIA/Megatron-LM megatron/training/arguments.py at commit {commit}: its add_argument flags "
          f"(tools/megatron_argument_flags.py){how}")
    for flag in flags:
        print(flag)


if __name__ == "__main__":
    main()
