#!/usr/bin/env python3
"""Check the Hydra overrides of generated veRL launch scripts against the installed veRL.

Usage: verl_check.py ARGS-FILE...

Each ARGS-FILE holds the arguments one script passed to `python3 -m verl.trainer.main_ppo`, one per
line (frameworks/test.sh runs the real scripts with a `python3` on PATH that writes them). For
each file the overrides are:

1. parsed by Hydra's override grammar, one at a time (a `,` sweep, brackets, `${`);
2. composed with veRL's own `ppo_trainer` config from the installed package, as main_ppo does,
   and every interpolation resolved (main_ppo resolves the whole config before it starts);
3. checked against what the installed trainer reads, from its source rather than from a list
   kept here: a key the YAML marks deprecated, a key of the legacy reward block
   (`legacy_reward_impl.yaml`) when main_ppo never migrates it, a rollout name missing from the
   rollout registry, a key no Python file of veRL mentions.

veRL itself is never imported (its package needs torch); only its files are read. Prints one
line per problem and `verl_check: N scripts, M overrides, all read` or exits 1.
"""
import importlib.util
import os
import re
import sys

from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf


def package_dir() -> str:
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("verl_check: verl is not installed in this interpreter")
    return list(spec.submodule_search_locations)[0]


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def python_sources(root: str) -> str:
    """Every Python file of the package, concatenated (to ask whether a name is ever used)."""
    parts = []
    for folder, _, files in os.walk(root):
        parts.extend(read(os.path.join(folder, f)) for f in files if f.endswith(".py"))
    return "\n".join(parts)


def registered_rollouts(root: str) -> set:
    """Rollout names the installed registries accept (`Registry.register("vllm", …)` and the
    `(name, mode)` keys of `_ROLLOUT_REGISTRY`)."""
    text = read(os.path.join(root, "workers", "rollout", "replica.py"))
    names = set(re.findall(r'RolloutReplicaRegistry\.register\(\s*"([^"]+)"', text))
    base = read(os.path.join(root, "workers", "rollout", "base.py"))
    registry = set(re.findall(r'\(\s*"([^"]+)"\s*,\s*"async"\s*\)', base))
    return names & registry if registry else names


def deprecated_keys(config_dir: str) -> set:
    """(config group, key) of every top-level YAML key whose comment block says it is deprecated:
    the group is the file's folder (`actor/dp_actor.yaml` is the group `actor`)."""
    found = set()
    for folder, _, files in os.walk(config_dir):
        for name in files:
            if not name.endswith(".yaml") or name.startswith("_generated"):
                continue
            comment = []
            for line in read(os.path.join(folder, name)).splitlines():
                stripped = line.strip()
                if stripped.startswith("#"):
                    comment.append(stripped.lower())
                    continue
                m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*:", stripped)
                if m and any("deprecated" in c for c in comment) and not line.startswith(" "):
                    found.add((os.path.basename(folder), m.group(1)))
                comment = []
    return found


def legacy_groups(config_dir: str) -> set:
    """Top-level groups of the legacy reward block, which compose but are read only where the
    trainer migrates them."""
    path = os.path.join(config_dir, "legacy_reward_impl.yaml")
    if not os.path.exists(path):
        return set()
    cfg = OmegaConf.load(path)
    return {k for k in cfg.keys() if k != "defaults"}


def main(paths) -> int:
    root = package_dir()
    config_dir = os.path.join(root, "trainer", "config")
    sources = python_sources(root)
    main_ppo = read(os.path.join(root, "trainer", "main_ppo.py"))
    migrated = "migrate_legacy_reward_impl" in main_ppo
    legacy = set() if migrated else legacy_groups(config_dir)
    rollouts = registered_rollouts(root)
    deprecated = deprecated_keys(config_dir)
    parser = OverridesParser.create()
    problems, overrides = [], 0
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        for path in paths:
            args = [a for a in read(path).splitlines() if a]
            if args[:2] == ["-m", "verl.trainer.main_ppo"]:
                args = args[2:]
            name = os.path.basename(path)
            parsed = []
            for a in args:
                if "${" in a.partition("=")[2]:
                    problems.append(f"{name}: {a!r} would be interpolated by OmegaConf")
                try:
                    parsed.append(parser.parse_overrides([a])[0])
                except Exception as e:  # Hydra's grammar refuses it
                    problems.append(f"{name}: {a!r} is not a Hydra override: {str(e).splitlines()[0]}")
            try:
                cfg = compose(config_name="ppo_trainer", overrides=args)
                OmegaConf.to_container(cfg, resolve=True)
            except Exception as e:
                problems.append(f"{name}: veRL's config refuses the overrides: {str(e).splitlines()[0]}")
                continue
            for o in parsed:
                overrides += 1
                key = o.key_or_group
                if o.is_sweep_override():
                    problems.append(f"{name}: {key} is a sweep, not a value")
                parts = key.split(".")
                if parts[0] in legacy:
                    problems.append(
                        f"{name}: {key} is in veRL's legacy reward block, which main_ppo never reads"
                    )
                leaf = parts[-1]
                if not re.search(r"[\.\"']" + re.escape(leaf) + r"\b", sources):
                    problems.append(f"{name}: no Python file of veRL reads `{leaf}` ({key})")
                # The reference is an actor config too (ref/dp_ref.yaml builds on actor/).
                group = "actor" if len(parts) > 1 and parts[-2] == "ref" else parts[-2] if len(parts) > 1 else ""
                if (group, leaf) in deprecated:
                    problems.append(f"{name}: {key} is marked deprecated in veRL's {group}/ config")
            for key in ("actor_rollout_ref.rollout.name", "reward.reward_model.rollout.name"):
                value = OmegaConf.select(cfg, key, throw_on_missing=False)
                enabled = key.startswith("actor") or OmegaConf.select(cfg, "reward.reward_model.enable")
                if enabled and value not in rollouts:
                    problems.append(
                        f"{name}: {key}={value!r} is not a registered rollout (veRL has {sorted(rollouts)})"
                    )
    for p in problems:
        print(f"verl_check: {p}")
    if problems:
        return 1
    print(f"verl_check: {len(paths)} scripts, {overrides} overrides, all read by veRL")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
