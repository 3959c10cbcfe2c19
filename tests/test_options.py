"""Typed options (gthinker/options.py): one default and one rule per field, taken by
gthinker.run as ``options=`` or keywords, and turned into the command line's flags."""

import dataclasses
import re
from pathlib import Path

import networkx as nx
import pytest

import gthinker
from gthinker import GPUOptions, HybridOptions, RunOptions, Task
from gthinker.cli.main import build_parser

DOCS = Path(__file__).resolve().parents[1] / "docs"


class Degrees(Task):
    counters = ("edge_ends",)

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, ctx.neighbors(record[0]).size)


def test_options_and_keywords_are_the_same_run():
    g = nx.path_graph(6)
    by_options = gthinker.run(Degrees, g, options=RunOptions(threads=2, time_budget=0.05))
    by_keywords = gthinker.run(Degrees, g, threads=2, time_budget=0.05)
    assert by_options.counters == by_keywords.counters == {"edge_ends": 10}
    assert by_options.threads == by_keywords.threads == 2
    # keywords override options; None leaves them
    assert gthinker.run(Degrees, g, options=RunOptions(threads=2), threads=1).threads == 1
    assert gthinker.run(Degrees, g, options=RunOptions(threads=2), threads=None).threads == 2


def test_rules_name_the_field_and_the_range():
    with pytest.raises(ValueError, match="time_budget must be a positive number of seconds"):
        RunOptions(time_budget=0)
    with pytest.raises(ValueError, match="early_split must be a number of seconds >= 0"):
        gthinker.run(Degrees, nx.path_graph(3), early_split=-1)
    with pytest.raises(ValueError, match="threads must be an integer from 1 to 4,096"):
        RunOptions(threads=5000)
    with pytest.raises(ValueError, match="gpu_chunk must be an integer from 1"):
        GPUOptions(gpu_chunk=0)
    with pytest.raises(ValueError, match="multiple of 32"):
        GPUOptions(threads_per_block=48)
    with pytest.raises(TypeError, match="unknown option 'time_budgett'"):
        gthinker.run(Degrees, nx.path_graph(3), time_budgett=1)
    with pytest.raises(TypeError, match="options must be a gthinker.RunOptions"):
        gthinker.run(Degrees, nx.path_graph(3), options={"threads": 1})


def test_keywords_reach_the_gpu_and_hybrid_options():
    o = RunOptions.from_keywords(gpu_chunk=1024, tau_c=-1,
                                 gpu_options={"eta_per_warp": 4, "give_back": False})
    assert o.gpu == GPUOptions(gpu_chunk=1024, eta_per_warp=4)
    assert o.hybrid == HybridOptions(tau_c=-1, give_back=False)
    assert RunOptions.from_keywords(gpu_options=GPUOptions(fanout=3)).gpu.fanout == 3
    assert RunOptions().early_split_seconds == RunOptions().time_budget / 20
    assert RunOptions(early_split=0).gpu_idle_split_seconds == 0


def _flags(command):
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {a.dest: a for a in sub.choices[command]._actions}


def test_cli_flags_come_from_the_fields():
    flags = _flags("mce")
    owners = RunOptions.keywords()
    for name in ("threads", "time_budget", "early_split", "cpu_chunk", "cpu_task_batch",
                 "spill_limit", "gpu_chunk", "gpu_task_batch", "eta_per_warp", "buffer_bytes",
                 "tau_c", "steal_bound", "steal_batch", "give_back", "level_steal"):
        field = next(f for f in dataclasses.fields(owners[name]) if f.name == name)
        assert field.metadata["help"].replace("%", "%%") in flags[name].help
        default = field.metadata["default_text"] or field.default
        if not isinstance(field.default, bool):
            assert f"(default: {default}".replace("%", "%%") in flags[name].help
    assert {"threads", "time_budget"} <= set(_flags("sm")) and "threads" in _flags("gsword")
    args = build_parser().parse_args(["mce", "g.txt", "--time-budget", "0.5"])
    assert args.time_budget == 0.5 and not hasattr(args, "threads")  # not given: API default


def test_cli_checks_a_flag_by_the_fields_rule(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["mce", "g.txt", "--early-split", "-1"])
    assert "early_split must be a number of seconds >= 0" in capsys.readouterr().err


def test_docs_state_the_defaults_the_fields_have():
    """docs/writing-apps.md lists the RunOptions fields with their defaults."""
    text = (DOCS / "writing-apps.md").read_text()
    for f in dataclasses.fields(RunOptions):
        if f.name in ("gpu", "hybrid"):
            continue
        row = re.search(rf"^\| `{f.name}` \|(.*)$", text, re.M)
        assert row, f"docs/writing-apps.md does not list {f.name}"
        said = re.search(r"\(default ([0-9.]+)", row.group(1))
        if f.default is not None:
            assert said and float(said.group(1)) == f.default, f.name
