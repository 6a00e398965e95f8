"""The report of fidelity-repredict.sh: results/fidelity's measured runs against the predictions
committed with them and against this checkout's, each plan at its round with the median error."""
import argparse
import json
import pathlib
import re
import statistics


def family_key(name):
    """'fashion-vgg-2-04-pipeline-2-stages' -> ('fashion-vgg-2', 'pipeline-2-stages'): the planner's
    rank prefix and the overall best's '-best' mark may move when the cost model changes."""
    match = re.match(r"^(.*-\d+)-\d{2}-(.*?)(-best)?$", name)
    return (match.group(1), match.group(2)) if match else (name, "")


def median_round_error(errors_by_round):
    ordered = sorted(errors_by_round.values())
    return ordered[len(ordered) // 2]  # fidelity.sh's pick: the middle of the sorted rounds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=pathlib.Path)
    parser.add_argument("predicted", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--source-commit", required=True)
    parser.add_argument("--cache-mib", type=float, help="the cache every calibration was read with (CACHE_MIB)")
    args = parser.parse_args()

    committed, measured = {}, {}
    for line in (args.source / "rounds.txt").read_text().splitlines():
        name, round_, predicted, seconds = line.split()
        committed.setdefault(name, {})[round_] = float(predicted)
        measured.setdefault(name, {})[round_] = float(seconds)
    now = {}
    for line in args.predicted.read_text().splitlines():
        name, round_, predicted = line.split()
        now.setdefault(family_key(name), {})[round_] = float(predicted)

    rows, missing = [], []
    for name in committed:
        again = now.get(family_key(name))
        if again is None or set(again) != set(measured[name]):
            missing.append(name)
            continue
        before = median_round_error({r: committed[name][r] / measured[name][r] - 1 for r in measured[name]})
        after = median_round_error({r: again[r] / measured[name][r] - 1 for r in measured[name]})
        rows.append({"plan": name, "committed_error": before, "repredicted_error": after})
    summary = {
        "committed_median_abs_error": statistics.median(abs(r["committed_error"]) for r in rows),
        "committed_worst_abs_error": max(abs(r["committed_error"]) for r in rows),
        "repredicted_median_abs_error": statistics.median(abs(r["repredicted_error"]) for r in rows),
        "repredicted_worst_abs_error": max(abs(r["repredicted_error"]) for r in rows),
        "plans": len(rows),
        "not_found": missing,
        "cache_mib": args.cache_mib,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({"summary": summary, "plans": rows}, indent=1) + "\n")
    lines = [
        "# Fidelity re-predicted: results/fidelity's runs against this simulator",
        "",
        f"Made by `bash tools/bench/fidelity-repredict.sh` at {args.commit}: the {len(rows)} plans of "
        f"`results/fidelity` (as committed at {args.source_commit}) emitted again, predicted with the calibrations committed there "
        "(`local-cpu-calibrated-<round>.json`), against the step times measured there (`rounds.txt`); "
        "each plan at its round with the median error, as `fidelity.sh` reports it. No run: only the "
        "cost model differs from the committed predictions."
        + (f" Every calibration's cache (`device.last_level_cache_bytes`) set to {args.cache_mib:g} MiB."
           if args.cache_mib is not None else ""),
        "",
        f"- median |error| of the iteration time: committed {summary['committed_median_abs_error']:.1%}, "
        f"re-predicted {summary['repredicted_median_abs_error']:.1%}",
        f"- worst |error|: committed {summary['committed_worst_abs_error']:.1%}, "
        f"re-predicted {summary['repredicted_worst_abs_error']:.1%}",
    ]
    if missing:
        lines.append(f"- not found among the plans emitted now (the planner ranks differently): {', '.join(missing)}")
    lines += ["", "| plan | committed error | re-predicted error |", "|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['plan']} | {r['committed_error']:+.1%} | {r['repredicted_error']:+.1%} |")
    (args.out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
