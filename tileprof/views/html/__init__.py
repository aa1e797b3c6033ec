"""``tileprof report``: one self-contained HTML page over every target.

``data`` builds the plain view model (types in ``view``), ``render`` has ``charts`` draw its
figures as inline SVG, and the Jinja2 templates (a base page plus one template per section,
autoescaped) lay it out. Nothing in the
page loads from the network: CSS, script and figures are inline.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import jinja2

from tileprof.core import numbers
from tileprof.views.html.data import Report, build_report

if TYPE_CHECKING:
    from tileprof.analyses.collectives import Job
    from tileprof.analyses.diff import Diff
    from tileprof.analyses.gpu_breakdown import Breakdown
    from tileprof.views.html.diff_page import DiffSection
    from tileprof.views.html.view import CriticalSection

__all__ = ["Report", "build_report", "render", "render_breakdown", "render_critical", "render_diff"]


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The template environment: package templates, autoescape on, undefined names fail, and
    the ``number``/``percent`` filters of ``tileprof.core.numbers``."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tileprof.views.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["number"] = numbers.number  # the one number policy, docs/metrics.md
    env.filters["percent"] = numbers.percent
    from tileprof.views.html.leads import LEADS

    env.globals.update(LEADS)  # each section's opening sentence
    return env


def render(report: Report, baseline: DiffSection | None = None) -> str:
    """The page for ``report``, its charts drawn unless it was built with ``charts=False``."""
    if report.draw_charts:
        from tileprof.views.html.charts import with_charts  # matplotlib: only when drawing
        from tileprof.views.html.supersteps_charts import with_superstep_charts

        report = with_superstep_charts(with_charts(report))
    template = environment().get_template("report.html.j2")
    return template.render(report=report, baseline=baseline)


def render_diff(
    diff: Diff,
    broken: tuple[str, ...] = (),
    abstained: tuple[str, ...] = (),
    setup_note: str | None = None,
    work_note: str | None = None,
) -> str:
    """The self-contained page of ``diff --format html``; ``abstained``: why ``--fail-on``
    gave no verdict; ``setup_note``: said first, the two sides ran on different setups;
    ``work_note``: then, they mostly run different groups (each None where ``abstained``
    already says it)."""
    import dataclasses

    from tileprof.views.html.diff_page import diff_page  # matplotlib: only when drawing

    page = diff_page(diff, broken)
    section = dataclasses.replace(
        page.section, abstained=abstained, setup_note=setup_note, work_note=work_note
    )
    page = dataclasses.replace(page, section=section)
    return environment().get_template("diff.html.j2").render(page=page)


def render_breakdown(result: Breakdown, job: Job) -> str:
    """The self-contained page of ``breakdown --format html``."""
    from tileprof.views.breakdown_export import unlaunched_note
    from tileprof.views.html.breakdown_data import breakdown_section

    template = environment().get_template("breakdown_page.html.j2")
    notes = tuple(n for n in [unlaunched_note(result)] if n is not None)
    return template.render(bd=breakdown_section(result, job, notes=notes))


def render_critical(section: CriticalSection) -> str:
    """The self-contained page of ``critical --format html`` (``critical_data``'s section)."""
    return environment().get_template("critical_page.html.j2").render(cs=section)
