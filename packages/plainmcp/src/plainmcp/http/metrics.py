"""A tiny metrics registry with the Prometheus text exposition format (version 0.0.4).

Counters, gauges (set, or read from a function when scraped) and histograms with fixed buckets.
Label values are escaped as the format requires. Updates are plain Python operations with no
``await`` in between, so one event loop (and the GIL, for threads) keeps them consistent.

Label values must come from bounded sets (method names we know, tools that are registered):
every distinct combination is a time series the scraper keeps.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LabelValues = tuple[str, ...]


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value as Prometheus writes it (``+Inf``, ``NaN``, integers without ``.0``)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _labels(names: Sequence[str], values: Sequence[str], extra: tuple[str, str] | None = None) -> str:
    pairs = [f'{name}="{escape_label_value(value)}"' for name, value in zip(names, values, strict=True)]
    if extra is not None:
        pairs.append(f'{extra[0]}="{escape_label_value(extra[1])}"')
    return "{" + ",".join(pairs) + "}" if pairs else ""


class _Metric:
    kind = ""

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help
        self.label_names = tuple(labels)

    def _key(self, labels: dict[str, str]) -> LabelValues:
        try:
            key = tuple([str(labels[name]) for name in self.label_names])
        except KeyError:
            key = ()
        if len(key) != len(labels) or len(key) != len(self.label_names):
            raise ValueError(f"{self.name} takes labels {self.label_names}, got {sorted(labels)}")
        return key

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {_escape_help(self.help)}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> Iterable[str]:
        raise NotImplementedError


MetricT = TypeVar("MetricT", bound=_Metric)


class Counter(_Metric):
    """A value that only goes up (requests served, bytes sent)."""

    kind = "counter"

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help, labels)
        self.values: dict[LabelValues, float] = {}

    def inc(self, amount: float = 1.0, /, **labels: str) -> None:
        if amount < 0:
            raise ValueError("a counter cannot decrease")
        key = self._key(labels)
        self.values[key] = self.values.get(key, 0.0) + amount

    def inc_at(self, key: LabelValues, amount: float = 1.0) -> None:
        """:meth:`inc` for label values already in :attr:`label_names` order (a hot path that
        knows its labels skips building and checking a mapping)."""
        if amount < 0:
            raise ValueError("a counter cannot decrease")
        self.values[key] = self.values.get(key, 0.0) + amount

    def get(self, **labels: str) -> float:
        return self.values.get(self._key(labels), 0.0)

    def samples(self) -> Iterable[str]:
        for key, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(self.label_names, key)} {format_value(value)}"


class Gauge(_Metric):
    """A value that goes up and down; or, with :meth:`collect_with`, one read when scraped."""

    kind = "gauge"

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help, labels)
        self.values: dict[LabelValues, float] = {}
        self._collectors: list[Callable[[], Iterable[tuple[dict[str, str], float]]]] = []

    def set(self, value: float, /, **labels: str) -> None:
        self.values[self._key(labels)] = value

    def inc(self, amount: float = 1.0, /, **labels: str) -> None:
        key = self._key(labels)
        self.values[key] = self.values.get(key, 0.0) + amount

    def dec(self, amount: float = 1.0, /, **labels: str) -> None:
        self.inc(-amount, **labels)

    def collect_with(self, collector: Callable[[], Iterable[tuple[dict[str, str], float]]]) -> None:
        """Read ``(labels, value)`` pairs from ``collector`` at every scrape (they win over ``set``)."""
        self._collectors.append(collector)

    def current(self) -> dict[LabelValues, float]:
        values = dict(self.values)
        for collector in self._collectors:
            for labels, value in collector():
                values[self._key(labels)] = value
        return values

    def samples(self) -> Iterable[str]:
        for key, value in sorted(self.current().items()):
            yield f"{self.name}{_labels(self.label_names, key)} {format_value(value)}"


class Histogram(_Metric):
    """Observations counted into fixed, cumulative buckets, with their sum and count."""

    kind = "histogram"

    def __init__(self, name: str, help: str, buckets: Sequence[float], labels: Sequence[str] = ()) -> None:
        if "le" in labels:
            raise ValueError('"le" is reserved for histogram buckets')
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds != sorted(set(bounds)):
            raise ValueError("buckets must be distinct numbers")
        super().__init__(name, help, labels)
        self.bounds = [*(b for b in bounds if not math.isinf(b)), math.inf]
        self.series: dict[LabelValues, list[float]] = {}  # bucket counts..., sum, count

    def observe(self, value: float, /, **labels: str) -> None:
        self.observe_at(self._key(labels), value)

    def observe_at(self, key: LabelValues, value: float) -> None:
        """:meth:`observe` for label values already in :attr:`label_names` order."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = [0.0] * (len(self.bounds) + 2)
        series[bisect_left(self.bounds, value)] += 1  # the first bucket that holds it; summed when written
        series[-2] += value
        series[-1] += 1

    def count(self, **labels: str) -> float:
        series = self.series.get(self._key(labels))
        return series[-1] if series else 0.0

    def samples(self) -> Iterable[str]:
        for key, series in sorted(self.series.items()):
            cumulative = 0.0
            for index, bound in enumerate(self.bounds):
                cumulative += series[index]
                labels = _labels(
                    self.label_names, key, ("le", format_value(bound) if math.isinf(bound) else repr(bound))
                )
                yield f"{self.name}_bucket{labels} {format_value(cumulative)}"
            plain = _labels(self.label_names, key)
            yield f"{self.name}_sum{plain} {format_value(series[-2])}"
            yield f"{self.name}_count{plain} {format_value(series[-1])}"


class Registry:
    """The metrics of one application, written out together."""

    def __init__(self) -> None:
        self.metrics: dict[str, _Metric] = {}

    def _add(self, metric: MetricT) -> MetricT:
        if metric.name in self.metrics:
            raise ValueError(f"metric {metric.name!r} is already registered")
        self.metrics[metric.name] = metric
        return metric

    def counter(self, name: str, help: str, labels: Sequence[str] = ()) -> Counter:
        return self._add(Counter(name, help, labels))

    def gauge(self, name: str, help: str, labels: Sequence[str] = ()) -> Gauge:
        return self._add(Gauge(name, help, labels))

    def histogram(self, name: str, help: str, buckets: Sequence[float], labels: Sequence[str] = ()) -> Histogram:
        return self._add(Histogram(name, help, buckets, labels))

    def exposition(self) -> bytes:
        """Every metric in the text format, ready to serve as ``CONTENT_TYPE``."""
        lines: list[str] = []
        for metric in self.metrics.values():
            lines.extend(metric.header())
            lines.extend(metric.samples())
        return ("\n".join(lines) + "\n").encode("utf-8")
