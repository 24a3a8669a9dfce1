"""The rooms' continuous variables in minihome (the simulator in ``sim``): piecewise-affine rates and their exact advance.

Rooms have temperature (centi-degC), humidity (centi-%RH) and PM10 (ug/m3) that devices move every tick of 0.1 s,
additively, while each relaxes to the room's baseline. Each device's rate is piecewise affine in the variable (a rate
cap is one more piece), so between two discrete events the per-tick recursion v <- v + dt (s v + c) has the closed
form v_n = v* + (1 + s dt)^n (v_0 - v*) (`closed_form`); `safe_ticks` says how many ticks stay inside one piece.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .sim import Room

TICKS_PER_SECOND = 10  # one tick is 0.1 s (the paper's)
INF = math.inf

# ---- environment: piecewise-affine rates -------------------------------------------------------------------
# A rate piece is (slope, intercept, lo, hi): d v / d t = slope * v + intercept per second while lo <= v <= hi.
# The constants are the official aggregators' (spec 3.3), in Matter units.

COOL_CAP, FAN_CAP = 0.05, 0.02      # centi-degC per second at f = 1 (1.8 and 0.72 degC per hour)
T_RELAX, H_RELAX, PM_RELAX = 2e-4, 0.01, 0.1  # relaxation to the baseline, per second
FAN_FLOOR = 200                     # a fan cools no lower than 2 degC below the baseline
CLIP = {"temperature": (-INF, INF), "humidity": (0.0, 10000.0), "pm10": (0.0, INF)}
VARIABLES = tuple(CLIP)


def toward(setpoint: float, cap: float, gain: float, v: float, sign: int, knee: float = 1.0):
    """sign * gain * min(cap, knee * |v - setpoint|) while v is on the far side of the setpoint (sign -1: above it,
    cooling down; +1: below it, heating up), else 0."""
    edge = setpoint + sign * -cap / knee  # where the cap starts to bind
    if sign < 0:
        if v <= setpoint:
            return 0.0, 0.0, -INF, setpoint
        if v < edge:
            return -gain * knee, gain * knee * setpoint, setpoint, edge
        return 0.0, -gain * cap, edge, INF
    if v >= setpoint:
        return 0.0, 0.0, setpoint, INF
    if v > edge:
        return -gain * knee, gain * knee * setpoint, edge, setpoint
    return 0.0, gain * cap, -INF, edge


def pieces(room: "Room", var: str, v: float) -> list[tuple]:
    """Every device's rate piece at value v, and the relaxation to the baseline."""
    out = []
    base = room.baseline[var]
    for dev in room.devices.values():
        if not dev.attrs.get("OnOff", {}).get("OnOff", False):
            continue
        f = dev.attrs.get("FanControl", {}).get("PercentCurrent", 0) / 100
        mode = dev.attrs.get("Thermostat", {}).get("SystemMode", 0)
        kind = dev.type
        if var == "temperature":
            therm = dev.attrs.get("Thermostat", {})
            if mode == 3 and kind == "air_conditioner":
                out.append(toward(therm["OccupiedCoolingSetpoint"], COOL_CAP, f, v, -1))
            elif mode == 4:
                out.append(toward(therm["OccupiedHeatingSetpoint"], COOL_CAP, f, v, +1))
            elif kind == "fan" or mode == 7:
                out.append(toward(base - FAN_FLOOR, FAN_CAP, f, v, -1, knee=0.5))
        elif var == "humidity" and kind == "humidifier":    # +5 f max(0.1, (9000 - H) / 9000)
            out.append((-5 * f / 9000, 5 * f, -INF, 8100.0) if v < 8100 else (0.0, 0.5 * f, 8100.0, INF))
        elif var == "humidity" and kind == "dehumidifier":  # -5 f max(0.1, (H - 1000) / 9000)
            out.append((-5 * f / 9000, 5 * f * 1000 / 9000, 1900.0, INF) if v > 1900 else (0.0, -0.5 * f, -INF, 1900.0))
        elif var == "pm10" and kind == "air_purifier":      # -5 f^0.8 (0.8 C / C_base)
            out.append((-4 * f ** 0.8 / max(base, 1e-6), 0.0, -INF, INF))
    relax = {"temperature": T_RELAX, "humidity": H_RELAX, "pm10": PM_RELAX}[var]
    out.append((-relax, relax * base, -INF, INF))
    return out


def regime(room: "Room", var: str, v: float) -> tuple[float, float, float, float]:
    """The summed rate (slope, intercept) at v and the interval [lo, hi] where it holds (clip bounds included)."""
    lo, hi = CLIP[var]
    slope = intercept = 0.0
    for s, c, a, b in pieces(room, var, v):
        slope, intercept, lo, hi = slope + s, intercept + c, max(lo, a), min(hi, b)
    return slope, intercept, lo, hi


def tick_value(v: float, slope: float, intercept: float, var: str) -> float:
    """One tick of the recursion (the reference the closed form reproduces)."""
    lo, hi = CLIP[var]
    return min(hi, max(lo, v + (slope * v + intercept) / TICKS_PER_SECOND))


def closed_form(v0: float, slope: float, intercept: float, n: int) -> float:
    """v_n of v <- v + dt (slope v + intercept), n ticks."""
    a, b = 1 + slope / TICKS_PER_SECOND, intercept / TICKS_PER_SECOND
    if slope == 0:
        return v0 + n * b
    fixed = -intercept / slope
    return fixed + a ** n * (v0 - fixed)


def safe_ticks(v0: float, slope: float, intercept: float, lo: float, hi: float) -> float:
    """Ticks the closed form may jump with every intermediate value still in [lo, hi]: one tick short of the
    first crossing (so float error at the boundary never matters), at least 1, inf when it never leaves."""
    b = intercept / TICKS_PER_SECOND
    if slope == 0:
        if b == 0:
            return INF
        crossing = ((hi - v0) if b > 0 else (v0 - lo)) / abs(b)
    else:
        fixed = -intercept / slope
        if lo <= fixed <= hi:
            return INF
        bound = hi if fixed > hi else lo
        ratio = (bound - fixed) / (v0 - fixed)
        if ratio <= 0:
            return 1
        crossing = math.log(ratio) / math.log(1 + slope / TICKS_PER_SECOND)
    return max(1, math.ceil(crossing) - 1) if math.isfinite(crossing) else INF
