"""``python -m bench.run embedding``: the local embedding model's throughput, load time and memory.

Movies rendered with the default document template (what a ``huggingFace`` embedder without a
template embeds, cut at 400 bytes), embedded by all-MiniLM-L6-v2 in this process: docs/s per
runtime (numpy, onnxruntime), threads and batch size, median of the runs, the runs interleaved so
that a busy machine's drift spreads over every configuration. Load time (reading the packaged zip,
building the runtime) and memory (VmRSS once loaded, VmHWM after embedding) are taken in a fresh
process per runtime and run, so that one runtime's memory does not count in another's.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any, get_args

from bench import datasets
from bench.run import _int_list
from common.document_template import DEFAULT_MAX_BYTES, DEFAULT_TEMPLATE, render_document
from shard.embedding.local import LocalEmbedder, Runtime

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DESCRIPTION = "local embedding model (all-MiniLM-L6-v2) on movies, default document template"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run embedding", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--docs", type=int, default=400, help="movies embedded per measurement")
    parser.add_argument("--runtimes", type=_runtimes, default=list(get_args(Runtime)))
    parser.add_argument("--threads", type=_int_list, default=[1, 2], help="threads per forward pass (1,2)")
    parser.add_argument("--batch-sizes", type=_int_list, default=[8, 16, 32, 64], help="texts per pass")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="result file; default bench/results/embedding-<time>.json")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.docs < 1:
        parser.error("--runs and --docs must be positive")
    return args


def _runtimes(text: str) -> list[str]:
    values = [part for part in text.split(",") if part]
    unknown = set(values) - set(get_args(Runtime))
    if not values or unknown:
        raise argparse.ArgumentTypeError(f"expected some of {', '.join(get_args(Runtime))}")
    return values


def movie_texts(count: int) -> list[str]:
    documents = itertools.islice(datasets.DATASETS["movies"].documents(), count)
    return [render_document(DEFAULT_TEMPLATE, document, DEFAULT_MAX_BYTES) for document in documents]


def _memory_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def load_and_memory(runtime: str, texts: list[str]) -> dict[str, float]:
    """In a fresh process: the model's load time, then RSS once loaded and peak RSS after embedding."""
    before = _memory_mib("VmRSS")
    started = time.perf_counter()
    embedder = LocalEmbedder(MODEL, runtime=runtime)  # type: ignore[arg-type]
    load_s = time.perf_counter() - started
    loaded = _memory_mib("VmRSS")
    embedder.embed_documents(texts)
    return {
        "load_s": round(load_s, 3),
        "rss_before_mib": before,
        "rss_loaded_mib": loaded,
        "hwm_mib": _memory_mib("VmHWM"),
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    texts = movie_texts(args.docs)
    embedders = {
        (runtime, threads): LocalEmbedder(MODEL, runtime=runtime, threads=threads)
        for runtime in args.runtimes
        for threads in args.threads
    }
    any_embedder = next(iter(embedders.values()))
    tokens = [len(encoding.ids) for encoding in any_embedder.tokenizer.encode_batch(texts)]
    timings: dict[tuple[str, int, int], list[float]] = {}
    memory: dict[str, list[dict[str, float]]] = {runtime: [] for runtime in args.runtimes}
    spawn = multiprocessing.get_context("spawn")
    for run_number in range(1, args.runs + 1):
        for (runtime, threads), embedder in embedders.items():
            for batch_size in args.batch_sizes:
                print(f"run {run_number}/{args.runs}: {runtime}, {threads} threads, batch {batch_size}",
                      file=sys.stderr, flush=True)  # fmt: skip
                embedder.batch_size = batch_size
                started = time.perf_counter()
                embedder.embed_documents(texts)
                timings.setdefault((runtime, threads, batch_size), []).append(time.perf_counter() - started)
        for runtime in args.runtimes:
            with spawn.Pool(1) as pool:
                memory[runtime].append(pool.apply(load_and_memory, (runtime, texts[:64])))
    rows = [
        {
            "runtime": runtime,
            "threads": threads,
            "batch_size": batch_size,
            "docs_per_s": round(len(texts) / statistics.median(seconds), 1),
            "runs_s": [round(s, 3) for s in seconds],
        }
        for (runtime, threads, batch_size), seconds in timings.items()
    ]
    return {
        "scenario": "embedding",
        "description": DESCRIPTION,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "options": {"docs": args.docs, "runs": args.runs},
        "environment": environment,
        "tokens": {"mean": round(statistics.mean(tokens), 1), "max": max(tokens)},
        "results": rows,
        "load": {
            runtime: {key: statistics.median(figures[key] for figures in runs) for key in runs[0]}
            for runtime, runs in memory.items()
        },
    }


def render(report: dict[str, Any]) -> str:
    env, options = report["environment"], report["options"]
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"{options['docs']} docs ({report['tokens']['mean']} tokens on average, "
        f"at most {report['tokens']['max']}), "
        f"runs={options['runs']} | python {env['python']}, {env['cpus']} CPUs, commit {env['commit']}, "
        f"load avg {env['loadavg_before']:.2f} before start",
        "",
        f"{'runtime':<8} {'threads':>7} {'batch':>5} {'docs/s':>8}   runs (s)",
    ]
    for row in report["results"]:
        lines.append(
            f"{row['runtime']:<8} {row['threads']:>7} {row['batch_size']:>5} {row['docs_per_s']:>8.1f}   "
            + " ".join(f"{s:.2f}" for s in row["runs_s"])
        )
    lines += [
        "",
        f"{'runtime':<8} {'load s':>7} {'RSS before':>10} {'RSS loaded':>10} {'VmHWM':>7}  (MiB, median)",
    ]
    for runtime, figures in report["load"].items():
        lines.append(
            f"{runtime:<8} {figures['load_s']:>7.2f} {figures['rss_before_mib']:>10.1f} "
            f"{figures['rss_loaded_mib']:>10.1f} {figures['hwm_mib']:>7.1f}"
        )
    return "\n".join(lines)
