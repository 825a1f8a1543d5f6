#!/usr/bin/env python3
"""Prints '<file> <key>' for each source file given on stdin: the key clang-tidy's result depends
on besides clang-tidy itself and .clang-tidy, namely the compile command and the preprocessed
translation unit, with the source and build folders replaced by placeholders so that a clone in
another folder gets the same keys. Files without a compile command, or that do not preprocess, get
no line (clang-tidy then reports them itself).

    tidy_key.py SOURCE_DIR BUILD_DIR < files
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys

src, build = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
commands = {}
with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as db:
    for entry in json.load(db):
        commands[os.path.realpath(entry["file"])] = entry


def placeheld(data: bytes) -> bytes:
    return data.replace(build.encode(), b"@BUILD@").replace(src.encode(), b"@SRC@")


def key(file: str):
    entry = commands.get(os.path.realpath(os.path.join(src, file)))
    if entry is None:
        return None
    args = entry.get("arguments") or shlex.split(entry["command"])
    kept, skip = [], False
    for arg in args:  # drop the output and dependency-file flags; preprocess to stdout
        if skip:
            skip = False
        elif arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif arg not in ("-c", "-MD", "-MMD"):
            kept.append(arg)
    text = subprocess.run(kept + ["-E", "-P"], cwd=entry["directory"], capture_output=True,
                          check=False)
    if text.returncode != 0:
        return None
    digest = hashlib.sha256()
    digest.update(placeheld(" ".join(kept).encode()))
    digest.update(placeheld(text.stdout))
    return digest.hexdigest()


files = [line.strip() for line in sys.stdin if line.strip()]
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for file, digest in zip(files, pool.map(key, files)):
        if digest is not None:
            print(file, digest)
