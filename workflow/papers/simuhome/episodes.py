"""The benchmark: 12 categories of episodes (6 query types x feasible/infeasible) and the judge of an episode.

An episode (episode.schema.json validates every one) holds the query text, where the user is, the home it starts
from, `parse` (the request as structured data: what a perfect semantic parser reads from the text; the scripted
agents read it, an LLM agent sees only the text, and it says nothing about feasibility) and `eval`, which only
the judge reads:
  * QT1 (state query): the value asked for, judged against the simulator at the moment of the answer;
  * QT2 (implicit intent): a room variable must move >= `min_change` units in the asked direction within 30
    virtual minutes of the query (the home starts at its baseline, so without a device nothing moves);
  * QT3 (explicit control): attribute goals on the home's state when the agent finishes;
  * QT4-1/2/3 (scheduling): goals at absolute times: the attribute must have been set to the value within
    +-`tolerance_ticks` (the paper's 300 ticks, 30 s) of the time and still hold it at the end of that window;
  * every infeasible episode: the answer must say INFEASIBLE and name the reason class.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import environment, matter, sim

SCHEMA = Path(__file__).with_name("episode.schema.json")
CATEGORIES = [f"{qt}_{f}" for qt in ("qt1", "qt2", "qt3", "qt4_1", "qt4_2", "qt4_3") for f in ("feasible", "infeasible")]
REASONS = ("missing_device", "missing_attribute", "no_capable_device", "out_of_range", "invalid_state", "past_time",
           "not_running", "contradiction")
TOLERANCE_TICKS = 300       # the paper's tolerance for a scheduled goal (30 s)
QT2_WINDOW_S = 1800         # QT2: the variable is judged 30 virtual minutes after the query
QT2_MIN_CHANGE = 0.5        # ... and must have moved this much (degC, %RH, lux or ug/m3)

ROOMS_ALWAYS = ["living_room", "bedroom", "kitchen", "utility_room"]
ROOMS_MORE = ["office", "bathroom", "kids_room", "garage"]
CLIMATE = ["air_conditioner", "heat_pump", "fan", "humidifier", "dehumidifier", "air_purifier", "window_covering"]
HOME_APPLIANCE = {"kitchen": ["dishwasher"], "utility_room": ["laundry_washer", "laundry_dryer"]}
CYCLE_MINUTES = {"dishwasher": (60, 90), "laundry_washer": (40, 60), "laundry_dryer": (50, 70)}
SHORT = {"on_off_light": "light", "dimmable_light": "dimlight", "air_conditioner": "ac", "heat_pump": "heatpump",
         "fan": "fan", "humidifier": "hum", "dehumidifier": "dehum", "air_purifier": "purifier",
         "window_covering": "blinds", "dishwasher": "dishwasher", "laundry_washer": "washer", "laundry_dryer": "dryer"}
NOUN = {"light": "light", "air_conditioner": "air conditioner", "heat_pump": "heat pump", "fan": "fan",
        "humidifier": "humidifier", "dehumidifier": "dehumidifier", "air_purifier": "air purifier",
        "window_covering": "blinds", "dishwasher": "dishwasher", "laundry_washer": "washing machine",
        "laundry_dryer": "dryer"}
LIGHTS = ("on_off_light", "dimmable_light")
VARIABLE_UNITS = {"temperature": ("temperature_c", 0.2), "humidity": ("humidity_pct", 0.5),
                  "illuminance": ("illuminance_lux", 1.0), "pm10": ("pm10_ugm3", 0.5)}
DISTRACTORS = ["", "", "Morning! ", "I'm working from home today. ", "Quick one: ", "The cat is asleep on the sofa. "]


def kind_of(device_type: str) -> str:
    """The noun a user says: both light types are 'light'."""
    return "light" if device_type in LIGHTS else device_type


def room_name(room: str) -> str:
    return room.replace("_", " ")


# ---- what an action is: its calls, its goals, its words ---------------------------------------------------

def action_calls(action: dict, device_id: str) -> list[tuple[str, dict]]:
    """The tool calls that carry out an action on a device, in dependency order (On before a setting)."""
    do, v = action["do"], action.get("value")

    def cmd(cluster, command, args=None):
        return "execute_command", {"device_id": device_id, "cluster": cluster, "command": command} | (
            {"args": args} if args else {})

    def write(cluster, attribute, value):
        return "write_attribute", {"device_id": device_id, "cluster": cluster, "attribute": attribute, "value": value}

    on = cmd("OnOff", "On")
    return {
        "on": lambda: [on], "off": lambda: [cmd("OnOff", "Off")],
        "brightness": lambda: [on, cmd("LevelControl", "MoveToLevel", {"level": level_of(v)})],
        "cool": lambda: [on, write("Thermostat", "SystemMode", 3), write("Thermostat", "OccupiedCoolingSetpoint", round(v * 100))],
        "heat": lambda: [on, write("Thermostat", "SystemMode", 4), write("Thermostat", "OccupiedHeatingSetpoint", round(v * 100))],
        "fan_speed": lambda: [on, write("FanControl", "PercentSetting", v)],
        "start": lambda: [on, cmd("OperationalState", "Start")],
        "pause": lambda: [cmd("OperationalState", "Pause")],
        "open": lambda: [cmd("WindowCovering", "UpOrOpen")], "close": lambda: [cmd("WindowCovering", "DownOrClose")],
    }[do]()


def level_of(percent) -> int:
    return max(0, round(percent * 254 / 100))


def action_goals(action: dict, device_id: str) -> list[dict]:
    """The attribute values an action leaves (what the judge checks)."""
    do, v = action["do"], action.get("value")
    g = {"on": lambda: [("OnOff.OnOff", True)], "off": lambda: [("OnOff.OnOff", False)],
         "brightness": lambda: [("OnOff.OnOff", True), ("LevelControl.CurrentLevel", level_of(v))],
         "cool": lambda: [("Thermostat.SystemMode", 3), ("Thermostat.OccupiedCoolingSetpoint", round(v * 100))],
         "heat": lambda: [("Thermostat.SystemMode", 4), ("Thermostat.OccupiedHeatingSetpoint", round(v * 100))],
         "fan_speed": lambda: [("FanControl.PercentSetting", v)],
         "start": lambda: [("OperationalState.OperationalState", matter.RUNNING)],
         "pause": lambda: [("OperationalState.OperationalState", matter.PAUSED)],
         "open": lambda: [("WindowCovering.CurrentPositionLiftPercent100ths", 0)],
         "close": lambda: [("WindowCovering.CurrentPositionLiftPercent100ths", 10000)]}[do]()
    return [{"device": device_id, "attribute": a, "value": val} for a, val in g]


def say(action: dict) -> str:
    """The words of an action ('set the bedroom light to 40 % brightness')."""
    thing = f"the {room_name(action['room'])} {NOUN[action['device']]}"
    v = action.get("value")
    return {"on": f"turn on {thing}", "off": f"turn off {thing}", "brightness": f"set {thing} to {v}% brightness",
            "cool": f"set {thing} to cool at {v} degrees", "heat": f"set {thing} to heat at {v} degrees",
            "fan_speed": f"set {thing} fan speed to {v}%", "start": f"start {thing}", "pause": f"pause {thing}",
            "open": f"open {thing}", "close": f"close {thing}"}[action["do"]]


ACTIONS_FOR = {  # device noun -> actions a user asks of it, with a feasible value range
    "light": [("on", None), ("off", None), ("brightness", (10, 100))],
    "air_conditioner": [("cool", (18, 26)), ("fan_speed", (40, 100)), ("off", None)],
    "heat_pump": [("heat", (20, 28)), ("off", None)],
    "fan": [("on", None), ("fan_speed", (20, 100)), ("off", None)],
    "humidifier": [("fan_speed", (30, 100)), ("on", None)], "dehumidifier": [("fan_speed", (30, 100)), ("on", None)],
    "air_purifier": [("fan_speed", (30, 100)), ("on", None)], "window_covering": [("open", None), ("close", None)],
}
OUT_OF_RANGE = {"brightness": [120, 150, 200], "cool": [5, 10, 35, 40], "heat": [2, 35, 40], "fan_speed": [120, 150, 300]}


# ---- homes -------------------------------------------------------------------------------------------------

def make_home(rng: np.random.Generator) -> dict:
    """4-6 rooms of 4-7 devices (at most one of each noun per room), climate devices off, env at its baseline in
    the official ranges (T 22-32 degC, RH 35-65 %, 100-1500 lux, PM10 20-100)."""
    hour = int(rng.integers(7, 19))
    rooms = ROOMS_ALWAYS + [str(r) for r in rng.choice(ROOMS_MORE, size=int(rng.integers(0, 3)), replace=False)]
    out = {"start": f"{hour:02d}:{int(rng.integers(0, 60)):02d}:{int(rng.integers(0, 60)):02d}", "rooms": {}}
    for room in rooms:
        kinds = list(HOME_APPLIANCE.get(room, [])) + [str(rng.choice(LIGHTS))]
        extra = [str(t) for t in rng.choice(CLIMATE, size=int(rng.integers(4, 8)) - len(kinds), replace=False)]
        devices = [new_device(room, t, rng) for t in kinds + extra]
        env = {"temperature": int(rng.integers(2200, 3201)), "humidity": int(rng.integers(3500, 6501)),
               "illuminance": int(rng.integers(100, 1501)), "pm10": int(rng.integers(20, 101))}
        out["rooms"][room] = {"env": env, "devices": devices}
    return out


def new_device(room: str, device_type: str, rng: np.random.Generator) -> dict:
    dev = {"id": f"{room}-{SHORT[device_type]}-{int(rng.integers(1, 10))}", "type": device_type, "attributes": {}}
    if device_type in LIGHTS:
        dev["attributes"]["OnOff.OnOff"] = bool(rng.random() < 0.5)
        if device_type == "dimmable_light":
            dev["attributes"]["LevelControl.CurrentLevel"] = int(rng.integers(1, 255))
    if device_type in CYCLE_MINUTES:
        lo, hi = CYCLE_MINUTES[device_type]
        dev["cycle_minutes"] = int(rng.integers(lo, hi + 1))
    return dev


def devices_of(home: dict, room: str, noun: str) -> list[dict]:
    return [d for d in home["rooms"][room]["devices"] if kind_of(d["type"]) == noun]


def ensure(home: dict, room: str, device_type: str, rng) -> dict:
    """The room's device of that noun, added if missing (and the light made of that type)."""
    found = devices_of(home, room, kind_of(device_type))
    if found:
        return found[0]
    dev = new_device(room, device_type, rng)
    home["rooms"][room]["devices"].append(dev)
    return dev


def remove(home: dict, room: str, noun: str) -> None:
    home["rooms"][room]["devices"] = [d for d in home["rooms"][room]["devices"] if kind_of(d["type"]) != noun]


def set_attrs(dev: dict, **attrs) -> None:
    dev["attributes"].update({k.replace("__", "."): v for k, v in attrs.items()})


def run_appliance(dev: dict, remaining_s: int) -> None:
    set_attrs(dev, OnOff__OnOff=True, OperationalState__OperationalState=matter.RUNNING)
    dev["cycle_minutes"] = max(dev["cycle_minutes"], -(-remaining_s // 60))
    dev["remaining_s"] = remaining_s


def prepare_for(home: dict, action: dict, rng) -> dict:
    """Put the action's device in a state the action changes (so that a goal is met only by acting)."""
    dev = ensure(home, action["room"], {"light": "dimmable_light" if action["do"] == "brightness" else str(rng.choice(LIGHTS))}
                 .get(action["device"], action["device"]), rng)
    if action["do"] == "brightness" and dev["type"] != "dimmable_light":
        dev["type"], dev["id"] = "dimmable_light", dev["id"].replace("-light-", "-dimlight-")
    do = action["do"]
    if do == "off":
        set_attrs(dev, OnOff__OnOff=True)
        if dev["type"] in ("fan", "air_conditioner"):
            set_attrs(dev, FanControl__PercentSetting=50, FanControl__PercentCurrent=50)
    elif do in ("on", "start", "fan_speed"):
        set_attrs(dev, OnOff__OnOff=False)
    elif do in ("cool", "heat"):  # off, and a set-point other than the one asked for
        v = action["value"]
        key = "Thermostat__OccupiedCoolingSetpoint" if do == "cool" else "Thermostat__OccupiedHeatingSetpoint"
        set_attrs(dev, OnOff__OnOff=False, **{key: min(30, max(16, v + 3 if v + 3 <= 30 else v - 3)) * 100})
    elif do == "brightness":
        set_attrs(dev, OnOff__OnOff=False, LevelControl__CurrentLevel=level_of(max(1, action["value"] - 30)) or 1)
    elif do == "open":
        set_attrs(dev, WindowCovering__CurrentPositionLiftPercent100ths=10000, WindowCovering__TargetPositionLiftPercent100ths=10000)
    return dev


def draw_action(home: dict, rng, room: str | None = None, nouns=None) -> dict:
    room = room or str(rng.choice(list(home["rooms"])))
    nouns = nouns or sorted(ACTIONS_FOR)
    noun = str(rng.choice(nouns))
    do, span = ACTIONS_FOR[noun][int(rng.integers(len(ACTIONS_FOR[noun])))]
    action = {"room": room, "device": noun, "do": do}
    if span:
        action["value"] = int(rng.integers(span[0], span[1] + 1))
        if do == "brightness" or do == "fan_speed":
            action["value"] = int(round(action["value"] / 10) * 10)
    return action


def clock_of(home: dict, offset_s: int = 0) -> str:
    return sim.clock(sim.parse_clock(home["start"]) + offset_s * environment.TICKS_PER_SECOND)


def at_tick(home: dict, offset_s: int) -> int:
    return sim.parse_clock(home["start"]) + offset_s * environment.TICKS_PER_SECOND


# ---- the 12 categories --------------------------------------------------------------------------------------
# Each returns (query, parse, eval) and may change the home; `rng` is the episode's own generator.

def qt1(home, rng, feasible):
    room = str(rng.choice(list(home["rooms"])))
    if rng.random() < 0.5:
        variable = str(rng.choice(sorted(VARIABLE_UNITS)))
        words = {"temperature": "the temperature", "humidity": "the humidity", "illuminance": "the light level (lux)",
                 "pm10": "the PM10 level"}
        if not feasible:
            variable, words = "co2", {"co2": "the CO2 level"}
            return (f"What is {words[variable]} in the {room_name(room)}?", {"type": "read_room", "room": room, "variable": variable},
                    {"reason": "missing_attribute"})
        return (f"What is {words[variable]} in the {room_name(room)}?", {"type": "read_room", "room": room, "variable": variable},
                {"answer": {"room": room, "variable": variable, "tolerance": VARIABLE_UNITS[variable][1]}})
    asks = [("light", "on_off", "Is the {r} light on?"), ("air_conditioner", "cool_setpoint", "What temperature is the {r} air conditioner set to?"),
            ("fan", "fan_speed", "What speed is the {r} fan running at (percent)?"),
            ("dishwasher", "minutes_left", "How many minutes are left on the dishwasher?")]
    noun, what, text = asks[int(rng.integers(len(asks)))]
    if noun == "dishwasher":
        room = "kitchen"
    parse = {"type": "read_device", "room": room, "device": noun, "what": what}
    if not feasible:
        if noun == "dishwasher":
            remove(home, room, "dishwasher")
        else:
            remove(home, room, noun)
        return text.format(r=room_name(room)), parse, {"reason": "missing_device"}
    dev = ensure(home, room, {"light": str(rng.choice(LIGHTS))}.get(noun, noun), rng)
    if noun == "air_conditioner":
        set_attrs(dev, OnOff__OnOff=True, Thermostat__SystemMode=3,
                  Thermostat__OccupiedCoolingSetpoint=int(rng.integers(18, 27)) * 100)
    elif noun == "fan":
        p = int(rng.integers(2, 11)) * 10
        set_attrs(dev, OnOff__OnOff=True, FanControl__PercentSetting=p, FanControl__PercentCurrent=p)
    elif noun == "dishwasher":
        run_appliance(dev, int(rng.integers(10, 60)) * 60 + int(rng.integers(0, 60)))
    return text.format(r=room_name(room)), parse, {"answer": {"device": dev["id"], "what": what,
                                                               "tolerance": 1.0 if what == "minutes_left" else 0.01}}


QT2_ASKS = {  # (variable, direction) -> phrasings
    ("temperature", "down"): ["The {r} is too hot.", "It's really warm in the {r}."],
    ("temperature", "up"): ["The {r} is freezing.", "It feels chilly in the {r}."],
    ("humidity", "down"): ["The {r} feels sticky.", "It's so humid in the {r}."],
    ("humidity", "up"): ["The air in the {r} is too dry.", "My skin feels dry in the {r}."],
    ("pm10", "down"): ["The air in the {r} is dusty.", "The {r} air quality is bad."],
    ("illuminance", "up"): ["It's too dark in the {r}.", "I can't see well in the {r}."],
}


def capable(variable: str, direction: str) -> list[str]:
    return [r["device_type"] for r in sim.CONTROL_RULES if (r["variable"], r["direction"]) == (variable, direction)]


def qt2(home, rng, feasible):
    keys = sorted(QT2_ASKS)
    variable, direction = keys[int(rng.integers(len(keys)))]
    room = str(rng.choice(list(home["rooms"])))
    text = str(rng.choice(QT2_ASKS[(variable, direction)])).format(r=room_name(room))
    parse = {"type": "intent", "room": room, "variable": variable, "direction": direction}
    types = capable(variable, direction)
    if variable == "temperature":  # a plausible complaint, and one a device can answer (heating stops at 30 degC)
        home["rooms"][room]["env"]["temperature"] = int(rng.integers(2600, 3201) if direction == "down" else rng.integers(1800, 2401))
    if feasible:
        dev = ensure(home, room, str(rng.choice(types)), rng)
        if variable == "illuminance":
            set_attrs(dev, OnOff__OnOff=False)
        return text, parse, {"env": {"room": room, "variable": variable, "direction": direction,
                                     "min_change": QT2_MIN_CHANGE, "after_s": QT2_WINDOW_S}}
    for t in types:
        home["rooms"][room]["devices"] = [d for d in home["rooms"][room]["devices"] if d["type"] != t]
    if variable == "illuminance":  # no light to switch on
        home["rooms"][room]["devices"] = [d for d in home["rooms"][room]["devices"] if d["type"] not in LIGHTS]
    return text, parse, {"reason": "no_capable_device"}


def qt3(home, rng, feasible):
    actions, used = [], set()
    for _ in range(int(rng.integers(1, 4))):
        a = draw_action(home, rng)
        if (a["room"], a["device"]) not in used:
            used.add((a["room"], a["device"]))
            actions.append(a)
    why = None if feasible else str(rng.choice(["missing_device", "out_of_range", "invalid_state"]))
    if why == "out_of_range":  # one request with a value the device cannot take
        bad = draw_action(home, rng, nouns=["light", "air_conditioner", "fan"])
        bad["do"] = {"light": "brightness", "air_conditioner": "cool", "fan": "fan_speed"}[bad["device"]]
        bad["value"] = int(rng.choice(OUT_OF_RANGE[bad["do"]]))
        actions = [a for a in actions if (a["room"], a["device"]) != (bad["room"], bad["device"])] + [bad]
    elif why == "invalid_state":  # pause an appliance that is not running
        room = str(rng.choice(["kitchen", "utility_room"]))
        actions = actions[:1] + [{"room": room, "device": str(rng.choice(HOME_APPLIANCE[room])), "do": "pause"}]
    goals = [g | {"at": None} for a in actions for g in action_goals(a, prepare_for(home, a, rng)["id"])]
    if why == "missing_device":
        remove(home, actions[0]["room"], actions[0]["device"])
    query = str(rng.choice(DISTRACTORS)) + "Please " + " and ".join(say(a) for a in actions) + "."
    return query, {"type": "control", "actions": actions}, {"goals": goals} if feasible else {"reason": why}


def timed(goals: list[dict], home: dict, offset_s: int) -> list[dict]:
    return [g | {"at": clock_of(home, offset_s), "tolerance_ticks": TOLERANCE_TICKS} for g in goals]


def qt4_1(home, rng, feasible):
    first = draw_action(home, rng, nouns=["light", "fan", "air_conditioner", "window_covering"])
    d1 = int(rng.integers(2, 31))
    if not feasible:
        past = clock_of(home, -int(rng.integers(10, 121)) * 60)[:5]
        prepare_for(home, first, rng)
        return (f"{say(first).capitalize()} at {past} today.", {"type": "schedule", "steps": [{"at_clock": past, "action": first}]},
                {"reason": "past_time"})
    dev = prepare_for(home, first, rng)
    steps, goals = [{"delay_min": d1, "action": first}], timed(action_goals(first, dev["id"]), home, d1 * 60)
    if rng.random() < 0.5 and first["do"] in ("on", "off", "open", "close"):
        undo = {"on": "off", "off": "on", "open": "close", "close": "open"}[first["do"]]
        second, d2 = first | {"do": undo}, int(rng.integers(2, 21))
        steps.append({"delay_min": d2, "action": second})
        goals += timed(action_goals(second, dev["id"]), home, (d1 + d2) * 60)
        text = f"In {d1} minutes, {say(first)}, and {d2} minutes after that, {say(second)}."
    else:
        text = f"{say(first).capitalize()} in {d1} minutes."
    return str(rng.choice(DISTRACTORS)) + text, {"type": "schedule", "steps": steps}, {"goals": goals}


def qt4_2(home, rng, feasible):
    anchor_room = str(rng.choice(["kitchen", "utility_room"]))
    anchor_noun = str(rng.choice(HOME_APPLIANCE[anchor_room]))
    anchor = ensure(home, anchor_room, anchor_noun, rng)
    action = draw_action(home, rng, nouns=["light", "fan", "air_purifier", "window_covering"])
    delay = int(rng.integers(1, 31))
    text = f"{delay} minutes after the {NOUN[anchor_noun]} finishes, {say(action)}."
    parse = {"type": "after_appliance", "anchor": {"room": anchor_room, "device": anchor_noun}, "delay_min": delay,
             "action": action}
    dev = prepare_for(home, action, rng)
    if not feasible:
        set_attrs(anchor, OperationalState__OperationalState=matter.STOPPED)
        return text, parse, {"reason": "not_running"}
    remaining = int(rng.integers(5, 41)) * 60 + int(rng.integers(0, 60))
    run_appliance(anchor, remaining)
    return str(rng.choice(DISTRACTORS)) + text, parse, {"goals": timed(action_goals(action, dev["id"]), home, remaining + delay * 60)}


def qt4_3(home, rng, feasible):
    washer = ensure(home, "utility_room", "laundry_washer", rng)
    dryer = ensure(home, "utility_room", "laundry_dryer", rng)
    remaining = int(rng.integers(5, 31)) * 60 + int(rng.integers(0, 60))
    run_appliance(washer, remaining)
    set_attrs(dryer, OnOff__OnOff=False, OperationalState__OperationalState=matter.STOPPED)
    dryer_start = {"room": "utility_room", "device": "laundry_dryer", "do": "start"}
    if not feasible:
        early = int(rng.integers(2, 16))
        text = f"When the washing machine finishes, start the dryer, and pause the dryer {early} minutes before that."
        return text, {"type": "coordinate", "variant": "contradiction", "early_min": early}, {"reason": "contradiction"}
    if rng.random() < 0.5:  # start now, pause at the washer's end
        dryer["cycle_minutes"] = max(dryer["cycle_minutes"], remaining // 60 + 10)
        text = "Start the dryer now, and pause it when the washing machine finishes."
        goals = [g | {"at": None} for g in action_goals(dryer_start, dryer["id"])]
        goals += timed(action_goals({"do": "pause"}, dryer["id"]), home, remaining)
        parse = {"type": "coordinate", "variant": "start_now_pause_at_end"}
    else:  # at the washer's end, start the dryer and switch a light off
        light = prepare_for(home, {"room": "utility_room", "device": "light", "do": "off"}, rng)
        text = "When the washing machine finishes, start the dryer and turn off the utility room light at the same time."
        goals = timed(action_goals(dryer_start, dryer["id"]) + action_goals({"do": "off"}, light["id"]), home, remaining)
        parse = {"type": "coordinate", "variant": "start_at_end_light_off"}
    return str(rng.choice(DISTRACTORS)) + text, parse, {"goals": goals}


GENERATORS = {"qt1": qt1, "qt2": qt2, "qt3": qt3, "qt4_1": qt4_1, "qt4_2": qt4_2, "qt4_3": qt4_3}


def where(parse: dict) -> str:
    """The room the request is about (the user's location)."""
    first = (parse.get("actions") or [None])[0] or (parse.get("steps") or [{}])[0].get("action") or parse.get("anchor")
    return parse.get("room") or (first or {}).get("room") or "utility_room"  # QT4-3 is about the laundry


def episode(category: str, index: int, seed: int) -> dict:
    """One episode of a category, a pure function of (category, index, seed)."""
    qt, feas = category.rsplit("_", 1)
    rng = np.random.default_rng([seed, CATEGORIES.index(category), index])
    home = make_home(rng)
    query, parse, ev = GENERATORS[qt](home, rng, feas == "feasible")
    user = where(parse)
    return {"meta": {"id": f"s{seed}-{category}-{index:03d}", "category": category, "query_type": qt,
                     "feasible": feas == "feasible", "seed": seed},
            "query": query, "user_location": user, "parse": parse, "initial_home_config": home, "eval": ev}


def generate(per_category: int, seed: int) -> list[dict]:
    out = [episode(c, i, seed) for c in CATEGORIES for i in range(per_category)]
    validate(out)
    return out


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def validate(episodes: list[dict]) -> None:
    """Every episode against episode.schema.json; ValueError naming the episode and the field."""
    for ep in episodes:
        errors = sorted(_validator().iter_errors(ep), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            raise ValueError(f"episode {ep.get('meta', {}).get('id', '?')}: {'.'.join(map(str, e.absolute_path))}: {e.message}")


# ---- the judge -----------------------------------------------------------------------------------------------

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def truth_of(ep: dict, home: sim.Home) -> float | bool:
    """QT1's true value at the moment of the answer."""
    a = ep["eval"]["answer"]
    if "variable" in a:
        return home.room_state(home.rooms[a["room"]])[VARIABLE_UNITS[a["variable"]][0]]
    dev = home.devices[a["device"]]
    return {"on_off": lambda: dev.attrs["OnOff"]["OnOff"],
            "cool_setpoint": lambda: dev.attrs["Thermostat"]["OccupiedCoolingSetpoint"] / 100,
            "fan_speed": lambda: dev.attrs["FanControl"]["PercentSetting"],
            "minutes_left": lambda: (dev.attrs["OperationalState"]["CountdownTime"] or 0) / 60}[a["what"]]()


def answer_right(ep: dict, home: sim.Home, answer: str) -> bool:
    truth = truth_of(ep, home)
    if isinstance(truth, bool):
        words = set(re.findall(r"[a-z]+", answer.lower()))
        return ("on" in words) == truth and ("off" in words) != truth
    numbers = [float(x) for x in NUMBER.findall(answer)]
    return bool(numbers) and abs(numbers[0] - truth) <= ep["eval"]["answer"]["tolerance"] + 1e-9


def value_at(home: sim.Home, device: str, attribute: str, tick: int, initial) -> tuple[object, int | None]:
    """(value, tick of the last change) of an attribute as of `tick`, from the home's change log."""
    last = [(t, v) for t, d, a, v in home.changes if d == device and a == attribute and t <= tick]
    return (last[-1][1], last[-1][0]) if last else (initial, None)


def goal_met(g: dict, home: sim.Home, initial: dict, finished: int, any_time: bool = False) -> bool:
    start = initial.get((g["device"], g["attribute"]))
    if g["at"] is None:
        return value_at(home, g["device"], g["attribute"], finished, start)[0] == g["value"]
    if any_time:  # the control of claim K4: the value at the end, whenever it was set
        return value_at(home, g["device"], g["attribute"], home.now, start)[0] == g["value"]
    at = sim.parse_clock(g["at"])
    value, when = value_at(home, g["device"], g["attribute"], at + g["tolerance_ticks"], start)
    return value == g["value"] and when is not None and when >= at - g["tolerance_ticks"]


def judge(ep: dict, home: sim.Home, answer: str, initial: sim.Home, any_time: bool = False) -> bool:
    """Whether the episode succeeded. `home` is the home when the agent finished (the judge advances it to every
    goal's time); `initial` is the home as the episode began. any_time: a scheduled goal counts whenever it was
    met (the judge without its clock: the negative control of claim K4)."""
    ev = ep["eval"]
    if "reason" in ev:  # the marker and exactly one reason class, the right one (naming them all is no answer)
        named = {r for r in REASONS if r in answer}
        return bool(re.search(r"\bINFEASIBLE\b", answer)) and named == {ev["reason"]}
    if "answer" in ev:
        return answer_right(ep, home, answer)
    finished = home.now
    if "env" in ev:
        e = ev["env"]
        unit, _ = VARIABLE_UNITS[e["variable"]]
        before = initial.room_state(initial.rooms[e["room"]])[unit]
        home.advance(max(0, initial.now + e["after_s"] * environment.TICKS_PER_SECOND - home.now) / environment.TICKS_PER_SECOND)
        moved = home.room_state(home.rooms[e["room"]])[unit] - before
        return (moved if e["direction"] == "up" else -moved) >= e["min_change"]
    last = max([sim.parse_clock(g["at"]) + g["tolerance_ticks"] for g in ev["goals"] if g["at"]], default=home.now)
    home.advance(max(0, last - home.now) / environment.TICKS_PER_SECOND)
    start = {(d.id, f"{c}.{a}"): v for d in initial.devices.values() for c, attrs in d.attrs.items() for a, v in attrs.items()}
    return all(goal_met(g, home, start, finished, any_time) for g in ev["goals"])
