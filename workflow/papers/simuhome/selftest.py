"""The simulator against closed forms and against itself (claims K1 and K2), on one seed's room.

K1: one AC cooling (fan 100 %, set-point 5 degC below the room) for `cool_minutes`: the drop against the solution
of the continuous ODE dT/dt = -cap + k (T_base - T) (the AC stays on its rate cap), monotone; two identical ACs
against one over 10 minutes (additivity); after switching off, the recovery toward the baseline against
1 - exp(-k t).
K2: `hours` of virtual time on a room with `active_devices` devices acting and `workflows` scheduled workflows:
wall time of the exact batch advance (median of `repeats`), and its final state against tick-by-tick stepping.
Its negative control is a naive accelerated simulator (60-s Euler steps, CoarseHome), judged by the same checks.
"""
from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_json, write_text
from workflow.core.step import Step

from . import environment, matter, sim

READS = ("simuhome.fidelity",)

EULER_S = 60  # the control's step


class CoarseHome(sim.Home):
    """The control of K2: each continuous stretch advanced in 60-s Euler steps of the same rates."""

    def _flow(self, ticks: int) -> None:
        for room in self.rooms.values():
            for var in environment.VARIABLES:
                v, left = room.env[var], ticks
                while left > 0:
                    n = min(left, EULER_S * environment.TICKS_PER_SECOND)
                    slope, intercept, _, _ = environment.regime(room, var, v)
                    lo, hi = environment.CLIP[var]
                    v = min(hi, max(lo, v + n / environment.TICKS_PER_SECOND * (slope * v + intercept)))
                    left -= n
                room.env[var] = v


def device(did: str, kind: str, **attrs) -> dict:
    return {"id": did, "type": kind, "attributes": {k.replace("__", "."): v for k, v in attrs.items()}}


def ac(did: str, setpoint: int, percent: int = 100) -> dict:
    return device(did, "air_conditioner", OnOff__OnOff=True, Thermostat__SystemMode=3,
                  Thermostat__OccupiedCoolingSetpoint=setpoint, FanControl__PercentSetting=percent,
                  FanControl__PercentCurrent=percent)


def room_config(env: dict, devices: list[dict]) -> dict:
    return {"start": "08:00:00", "rooms": {"room": {"env": env, "devices": devices}}}


def scenario_env(rng) -> dict:
    return {"temperature": int(rng.integers(2600, 3201)), "humidity": int(rng.integers(4000, 6501)),
            "illuminance": 300, "pm10": int(rng.integers(30, 101))}


def temperature_after(env: dict, acs: int, minutes: float) -> float:
    devices = [ac(f"ac{i}", env["temperature"] - 500) for i in range(acs)]
    home = sim.Home.from_config(room_config(env, devices))
    home.advance(minutes * 60)
    return home.rooms["room"].env["temperature"]


def fidelity(env: dict, minutes: int) -> tuple[dict, pd.DataFrame]:
    """K1's metrics and the traces of the figure (1 AC, 2 ACs, a dehumidifier; every 30 virtual seconds)."""
    t0, k = env["temperature"], environment.T_RELAX
    drop = t0 - temperature_after(env, 1, minutes)
    ode = environment.COOL_CAP / k * (1 - math.exp(-k * minutes * 60))  # T(t) = T* + (T0 - T*) e^{-kt}, T* = T0 - cap / k
    home = sim.Home.from_config(room_config(env, [ac("ac0", t0 - 500), device(
        "dh", "dehumidifier", OnOff__OnOff=True, FanControl__PercentSetting=100, FanControl__PercentCurrent=100)]))
    two = sim.Home.from_config(room_config(env, [ac("ac0", t0 - 500), ac("ac1", t0 - 500)]))
    rows = []
    for second in range(0, 2 * minutes * 60 + 1, 30):
        if second == minutes * 60:  # switch the AC off: the room relaxes back
            home.execute_command("ac0", "OnOff", "Off")
            end_of_cooling = home.rooms["room"].env["temperature"]
        rows.append({"minute": second / 60, "temperature_1ac": home.rooms["room"].env["temperature"] / 100,
                     "temperature_2ac": two.rooms["room"].env["temperature"] / 100,
                     "humidity_dehumidifier": home.rooms["room"].env["humidity"] / 100})
        home.advance(30)
        two.advance(30)
    trace = pd.DataFrame(rows)
    cooling = trace[trace.minute <= minutes].temperature_1ac.to_numpy()
    recovered = float((trace.temperature_1ac.iloc[-1] * 100 - end_of_cooling) / (t0 - end_of_cooling))
    ten = {n: t0 - temperature_after(env, n, 10) for n in (1, 2)}
    return {"k1_drop_rel_err": abs(drop - ode) / ode, "k1_monotone": float(np.all(np.diff(cooling) < 0)),
            "k1_two_over_one": ten[2] / ten[1],
            "k1_relax_rel_err": abs(recovered - (1 - math.exp(-k * minutes * 60))) / (1 - math.exp(-k * minutes * 60)),
            "info_k1_drop_c": drop / 100, "info_k1_ode_drop_c": ode / 100}, trace


def busy_config(env: dict, active: int) -> dict:
    """A room with `active` devices acting on it (cycling through ACs, fan, dehumidifier, purifier, humidifier),
    a running dishwasher and an idle washer."""
    kinds = ["ac", "fan", "dehumidifier", "air_purifier", "humidifier", "ac"]
    devices = []
    for i in range(active):
        kind = kinds[i % len(kinds)]
        if kind == "ac":
            devices.append(ac(f"d{i}", env["temperature"] - 300 - 100 * i, 80))
        else:
            devices.append(device(f"d{i}", kind, OnOff__OnOff=True, FanControl__PercentSetting=70,
                                  FanControl__PercentCurrent=70))
    devices.append(device("dw", "dishwasher", OnOff__OnOff=True, OperationalState__OperationalState=matter.RUNNING)
                   | {"cycle_minutes": 90, "remaining_s": 2400})
    devices.append(device("wm", "laundry_washer", OnOff__OnOff=True) | {"cycle_minutes": 45})
    return room_config(env, devices)


WORKFLOW_ACTIONS = [  # what the K2 scenario's workflows do, in turn
    {"tool": "execute_command", "args": {"device_id": "wm", "cluster": "OperationalState", "command": "Start"}},
    {"tool": "write_attribute", "args": {"device_id": "d0", "cluster": "FanControl", "attribute": "PercentSetting", "value": 30}},
    {"tool": "execute_command", "args": {"device_id": "d1", "cluster": "OnOff", "command": "Off"}},
]


def busy_home(cfg: dict, workflows: int, rng, cls=sim.Home, **options) -> sim.Home:
    home = cls.from_config(cfg, **options)
    times = sorted(int(t) for t in rng.integers(60, 7200, size=workflows))
    for i, t in enumerate(times):
        home.schedule_workflow(sim.clock(home.now + t * environment.TICKS_PER_SECOND), [WORKFLOW_ACTIONS[i % len(WORKFLOW_ACTIONS)]])
    return home


def final_state(home: sim.Home) -> np.ndarray:
    return np.array([home.rooms["room"].env[v] for v in environment.VARIABLES])


def acceleration(cfg: dict, f: dict, seed: int, cls=sim.Home) -> dict:
    """K2's metrics for the simulator `cls` against tick-by-tick stepping."""
    seconds = f["hours"] * 3600
    walls = []
    for _ in range(f["repeats"]):
        home = busy_home(cfg, f["workflows"], np.random.default_rng(seed), cls)
        started = time.perf_counter()
        home.advance(seconds)
        walls.append(time.perf_counter() - started)
    reference = busy_home(cfg, f["workflows"], np.random.default_rng(seed), exact_batch=False)
    started = time.perf_counter()
    reference.advance(seconds)
    tick_wall = time.perf_counter() - started
    same_events = [c for c in home.changes if c[2] != "OperationalState.CountdownTime"] == \
        [c for c in reference.changes if c[2] != "OperationalState.CountdownTime"]
    wall = statistics.median(walls)
    return {"k2_wall_s": wall, "k2_x_realtime": seconds / wall,
            "k2_max_abs_diff": float(np.max(np.abs(final_state(home) - final_state(reference)))) if same_events else math.inf,
            "info_k2_tick_by_tick_wall_s": tick_wall, "info_k2_ticks": seconds * environment.TICKS_PER_SECOND}


def main(argv=None):
    step = Step("simuhome", "selftest", __doc__)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    step.parser.add_argument("--trace", type=Path, required=True)
    args, p = step.start(argv)
    rng = np.random.default_rng(args.seed)
    env = scenario_env(rng)
    k1, trace = fidelity(env, p["cool_minutes"])
    cfg = busy_config(env, p["active_devices"])
    k2 = acceleration(cfg, p, args.seed)
    control = acceleration(cfg, p, args.seed, CoarseHome)
    result = {"seed": args.seed, "env": env, "method": k1 | k2, "coarse_euler": k1 | control}
    write_json(args.out, result)
    write_text(args.trace, trace.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=k1 | k2 | {f"control_{k}": v for k, v in control.items()}, outputs=[args.out, args.trace])


if __name__ == "__main__":
    main()
