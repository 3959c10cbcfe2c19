"""Apps declare themselves once (gthinker.registry): the bundled ones through entry
points, an app outside gthinker through $GTHINKER_APPS (the apps of the top-level
apps/ folder: tests/apps/), and each appears in the command line, the cluster and
`gthinker warmup` without a line of the engine naming it."""

from conftest import child_env, run_cli

from gthinker import registry


def test_the_bundled_apps_are_registered_by_entry_points():
    apps = registry.apps()
    bundled = {"mce", "sm", "count", "gsword"}
    assert bundled <= set(apps)
    for name in bundled:  # (other test files may register apps of their own)
        assert apps[name].request.__module__.startswith("gthinker.apps.")


def test_a_bad_gthinker_apps_entry_says_so():
    r = run_cli("--help", env=child_env(GTHINKER_APPS="no_such_module_here"))
    assert r.returncode != 0 and "no_such_module_here" in r.stderr
