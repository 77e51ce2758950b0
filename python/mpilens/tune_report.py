"""The report's section of a tuning (`mpilens tune`, docs/tune.md): which settings beat the
baseline beyond noise, the best and how to apply it, the failed settings and why, and a figure of
every ratio with its confidence interval against the noise band."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .errors import MpilensError
from .markup import Markup, element, join, png_image, table
from .plots.common import SMALL_FONT, decorate, literal, new_figure, to_plot
from .tune import STOPPED, TUNE_FILE, format_value

COLOURS = {"better": "#2a8f3c", "worse": "#c0392b", "noise": "#7f7f7f"}
# A log scale once the ratios spread over more than this factor: 0.2 and 5 on one linear axis
# would squeeze the noise band to a line.
LOG_SPREAD = 5.0

Document = Dict[str, Any]


def find_tune_files(path: Path) -> List[Path]:
    """The tunings to report: path itself when it is a .json file, else its tune.json if it has
    one (a results file, .jsonl, holds none)."""
    if path.is_file():
        return [path] if path.suffix == ".json" else []
    candidate = path / TUNE_FILE
    return [candidate] if candidate.is_file() else []


def _refused(path: Path, why: str) -> MpilensError:
    return MpilensError(f'"{path}" is not a {TUNE_FILE} mpilens can read: {why}')


def read_tune(path: Path) -> Document:
    """tune.json, its structure checked, so that a damaged file is one line and not a traceback."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise _refused(path, str(error)) from None
    if not isinstance(document, dict):
        raise _refused(path, "it holds no JSON object")
    for key in ("metric", "target", "library", "baseline"):
        if not isinstance(document.get(key), dict):
            raise _refused(path, f'"{key}" is not an object')
    settings = document.get("settings")
    if not isinstance(settings, list) or not all(
        isinstance(s, dict) and isinstance(s.get("name"), str) and isinstance(s.get("verdict"), str)
        for s in settings
    ):
        raise _refused(path, '"settings" is not a list of settings with a name and a verdict')
    return document


def _target_text(document: Document) -> str:
    target = document["target"]
    if target.get("kind") == "bench":
        return f"{target.get('family')} {target.get('bench')}"
    return shlex.join(str(word) for word in target.get("command") or [])


def _span(pair: Optional[Sequence[float]]) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]" if pair else "n/a"


def _settings_text(setting: Document) -> str:
    words = [f"{name}={value}" for name, value in (setting.get("env") or {}).items()]
    return shlex.join([*words, *(setting.get("launcher_options") or [])])


def _summary(document: Document) -> Markup:
    metric, library = document["metric"], document["library"]
    direction = "lower is better" if metric.get("lower_is_better", True) else "higher is better"
    unit = f", in {metric['unit']}" if metric.get("unit") else ""
    text = str(library.get("text") or "").splitlines()
    stopped = STOPPED.get(str(document.get("stopped")), str(document.get("stopped")))
    parts = [
        f"Metric: {metric.get('name')} ({direction}{unit}).",
        f"Library: {text[0]}." if text else "",
        f"{document.get('rounds')} rounds, stopped: {stopped}; noise band "
        f"±{float(document.get('min_effect') or 0) * 100:g}% around a ratio of 1.",
    ]
    return element("p", " ".join(part for part in parts if part))


def _best(document: Document) -> Markup:
    by_name = {s["name"]: s for s in document["settings"]}
    best = by_name.get(str(document.get("best")))
    band = f"±{float(document.get('min_effect') or 0) * 100:g}%"
    if best is None:
        return element(
            "p", f"No setting beat the baseline beyond noise ({band}): keep the library's defaults."
        )
    lines = [f"export {name}={shlex.quote(str(v))}" for name, v in (best.get("env") or {}).items()]
    options = shlex.join(best.get("launcher_options") or [])
    return join(
        [
            element(
                "p",
                f"Best: {best['name']}, {best.get('ratio', 0):.3f}x the baseline "
                f"{_span(best.get('ratio_ci'))}. Give its variables to the ranks (best.env; "
                "through the launcher: mpirun -x, mpiexec -genv, srun --export)"
                + (f" and the launcher the options {options} (best.launcher):" if options else ":"),
            ),
            element("pre", "\n".join(lines)) if lines else Markup(""),
        ]
    )


def _table(document: Document) -> Markup:
    unit = document["metric"].get("unit")
    baseline = document["baseline"]
    rows: List[List[object]] = [
        ["baseline", "", format_value(baseline.get("median"), unit), _span(baseline.get("ci")),
         "1", "", "", ""],
    ]  # fmt: skip
    classes: List[Optional[str]] = [None]
    for setting in document["settings"]:
        ratio = setting.get("ratio")
        rows.append(
            [
                setting["name"],
                _settings_text(setting),
                format_value(setting.get("median"), unit),
                _span(setting.get("ci")),
                f"{ratio:.3f}" if isinstance(ratio, (int, float)) else "n/a",
                _span(setting.get("ratio_ci")),
                setting["verdict"],
                setting.get("reason") or "",
            ]
        )
        classes.append("warn" if setting["verdict"] == "failed" else None)
    header = ["setting", "sets", "median", "95% CI", "ratio", "95% CI", "verdict", "reason"]
    return table(header, rows, classes)


def _figure_png(document: Document) -> Optional[bytes]:
    """Each measured setting's median ratio with its interval, the noise band behind them."""
    shown = [s for s in document["settings"] if s.get("ratio_ci") and s["verdict"] != "failed"]
    if not shown:
        return None
    figure = new_figure((6.4, 1.2 + 0.35 * len(shown)))
    axes = figure.add_subplot()
    effect = float(document.get("min_effect") or 0)
    axes.axvspan(1 - effect, 1 + effect, color="0.88", label=f"noise band ±{effect * 100:g}%")
    axes.axvline(1, color="0.35", linewidth=0.8)
    for row, setting in enumerate(shown):
        ratio, (low, high) = setting["ratio"], setting["ratio_ci"]
        axes.errorbar(
            [ratio], [row], xerr=[[ratio - low], [high - ratio]], fmt="o", capsize=3,
            color=COLOURS.get(setting["verdict"], "black"),
        )  # fmt: skip
    axes.set_yticks(range(len(shown)), [literal(s["name"]) for s in shown])
    axes.set_ylim(len(shown) - 0.5, -0.5)
    lows = [s["ratio_ci"][0] for s in shown if s["ratio_ci"][0] > 0]
    if lows and max(s["ratio_ci"][1] for s in shown) / min(lows) > LOG_SPREAD:
        from matplotlib.ticker import FuncFormatter

        axes.set_xscale("log")
        # Ratios read as 0.5 and 2, not as powers of ten.
        plain = FuncFormatter(lambda value, _: f"{value:g}")
        axes.xaxis.set_major_formatter(plain)
        axes.xaxis.set_minor_formatter(plain)
        axes.tick_params(which="minor", labelsize=SMALL_FONT)
    decorate(axes, "", "metric ÷ baseline's, same round (median, 95% CI)", "")
    axes.legend(loc="best", fontsize="small")
    return to_plot(figure, "tune-ratios", "").png


def _failed(document: Document) -> Markup:
    failed = [s for s in document["settings"] if s["verdict"] == "failed"]
    if not failed:
        return Markup("")
    items = [f"{s['name']}: {s.get('reason') or 'no reason recorded'}" for s in failed]
    return join(
        [
            element("h3", "Failed settings"),
            element("ul", join(element("li", item) for item in items)),
        ]
    )


def tune_section(path: Path) -> Markup:
    """The whole section of one tune.json: heading, summary, best, table, figure, failures."""
    document = read_tune(path)
    png = _figure_png(document)
    caption = (
        "Each setting's metric divided by the baseline's of the same round: the median ratio "
        "and its 95% confidence interval. Better or worse only when the whole interval lies "
        "outside the grey noise band; green better, red worse, grey noise."
    )
    figure = (
        Markup(f"<figure>{png_image(png, caption)}{element('figcaption', caption)}</figure>")
        if png is not None
        else Markup("")
    )
    return element(
        "section",
        join(
            [
                element("h2", f"Tuning: {_target_text(document)}"),
                _summary(document),
                _best(document),
                _table(document),
                figure,
                _failed(document),
                element("p", f"From {path}."),
            ]
        ),
    )
