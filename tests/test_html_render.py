"""The pages' entry points (``tileprof.views.html``): what each is handed reaches its page, and
the template environment escapes names and refuses an unknown one."""

from __future__ import annotations

import jinja2
import pytest

from tests.report_samples import generated_profile
from tests.test_diff_page_view import equal_calls
from tileprof.views.html import build_report, environment, render, render_diff
from tileprof.views.html.diff_page import diff_section


def test_a_diff_page_says_why_it_abstained_and_what_differs_first() -> None:
    page = render_diff(
        equal_calls(),
        broken=("k may not rise: +5.00%",),
        abstained=("the two runs ran on different devices",),
        setup_note="the sides ran on different setups",
        work_note="the sides mostly run different groups",
    )
    assert '<p class="setup-note">The sides ran on different setups.</p>' in page
    assert '<p class="setup-note">The sides mostly run different groups.</p>' in page
    assert '<ul class="abstained"><li>the two runs ran on different devices</li></ul>' in page
    assert '<ul class="broken"><li>k may not rise: +5.00%</li></ul>' in page
    plain = render_diff(equal_calls())
    assert '<p class="setup-note">' not in plain and '<ul class="abstained">' not in plain
    assert '<ul class="broken">' not in plain


def test_a_report_with_a_baseline_carries_its_comparison() -> None:
    report = build_report([generated_profile(samples=200, tiles=8)], charts=False)
    page = render(report, baseline=diff_section(equal_calls(), id="baseline"))
    assert '<a href="#baseline">Baseline</a>' in page
    assert 'id="baseline"' in page
    alone = render(report)
    assert "#baseline" not in alone and 'id="baseline"' not in alone


def test_the_environment_escapes_and_refuses_unknown_names() -> None:
    env = environment()
    assert env is environment()  # made once
    template = env.from_string("{{ name }}|{{ 0.5 | percent }}|{{ 1234.5 | number }}")
    assert template.render(name="<script>") == "&lt;script&gt;|50.00%|1,234"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    # blocks leave no blank line behind them, and a template's last newline is kept
    assert env.from_string("  {% if true %}\nx\n  {% endif %}\nend\n").render() == "x\nend\n"
