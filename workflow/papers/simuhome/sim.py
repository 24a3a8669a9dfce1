"""minihome: a Matter-grounded smart home whose rooms change continuously, advanced exactly in closed form.

The simulator of SimuHome (spec 3.3), as a library: `Home.from_config(cfg)` builds a home, `home.call(tool, args)`
is the agents' whole action space (the paper's tool names, JSON in, JSON out), `home.advance(seconds)` moves
virtual time.

* Devices are endpoints of Matter clusters (`matter`: the types, constraints and validation of a call).
* Every failed call answers a Matter interaction-model status (NOT_FOUND, UNSUPPORTED_ATTRIBUTE, CONSTRAINT_ERROR,
  INVALID_IN_STATE, ...) and changes nothing: a call is validated in full before it writes anything.
* Rooms have temperature (centi-degC), humidity (centi-%RH) and PM10 (ug/m3) that devices move every tick of
  0.1 s, additively, while each relaxes to the room's baseline; illuminance is instantaneous. Each device's rate
  is piecewise affine in the variable (a rate cap is one more piece), so between two discrete events the
  per-tick recursion v <- v + dt (s v + c) has the closed form v_n = v* + (1 + s dt)^n (v_0 - v*). `advance`
  jumps whole stretches in that closed form and steps single ticks only where a variable crosses into another
  piece (`environment`: the rates and their closed form); `Home(exact_batch=False)` steps every tick (the reference
  the batch advance is tested against).
* Appliances (dishwasher, washer, dryer) run a cycle whose OperationalState.CountdownTime falls each tick and
  stops the appliance at 0. Scheduled workflows run their actions at a given time and return only a receipt:
  an action that fails then fails silently (the paper's delayed feedback). `validate_on_schedule=True` checks
  the actions when they are registered instead: the negative control of claim K5.
"""
from __future__ import annotations

import copy
import dataclasses
import heapq
import json
from functools import lru_cache

import chip.clusters.Objects as Matter

from .environment import INF, TICKS_PER_SECOND, VARIABLES, closed_form, regime, safe_ticks, tick_value
from .matter import (ATTRIBUTES, COMMANDS, DEVICE_TYPES, FAN_MODE_PERCENT, PAUSED, RUNNING, STOPPED, WRITABLE,
                     CallError, check_write, parse_command)


# ---- the home ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Device:
    id: str
    type: str
    room: str
    attrs: dict            # cluster -> attribute -> value
    cycle_s: int = 0       # an appliance's cycle length when started
    remaining: int = 0     # an appliance's remaining ticks while running or paused


@dataclasses.dataclass
class Room:
    id: str
    env: dict              # temperature, humidity, pm10 (Matter units)
    baseline: dict         # the same keys plus illuminance (lux without lights)
    devices: dict          # id -> Device


def clock(tick: int) -> str:
    s = tick // TICKS_PER_SECOND
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def parse_clock(text) -> int:
    """'HH:MM[:SS]' -> ticks since midnight; CallError when malformed."""
    try:
        parts = [int(p) for p in str(text).split(":")]
        if len(parts) not in (2, 3) or not (0 <= parts[0] < 24 and 0 <= parts[1] < 60 and 0 <= parts[-1] < 60):
            raise ValueError
    except ValueError:
        raise CallError("INVALID_COMMAND", f"time {text!r} is not HH:MM:SS") from None
    h, m, s = (parts + [0])[:3]
    return (h * 3600 + m * 60 + s) * TICKS_PER_SECOND


class Home:
    def __init__(self, rooms: dict, now: int, exact_batch: bool = True, validate_on_schedule: bool = False):
        self.rooms, self.now = rooms, now
        self.exact_batch, self.validate_on_schedule = exact_batch, validate_on_schedule
        self.devices = {d.id: d for r in rooms.values() for d in r.devices.values()}
        self.workflows: dict[str, dict] = {}
        self.queue: list[tuple[int, int, str]] = []  # (tick, order, workflow id)
        self.changes: list[tuple[int, str, str, object]] = []  # (tick, device, "Cluster.Attribute", value)

    # -- building --
    @classmethod
    def from_config(cls, cfg: dict, **options) -> "Home":
        """cfg: {"start": "HH:MM:SS", "rooms": {room: {"env": {...}, "devices": [{"id", "type", "attributes":
        {"Cluster.Attribute": value}, "cycle_minutes", "remaining_s"}]}}} (the episode's initial_home_config)."""
        rooms = {}
        for rid, rc in cfg["rooms"].items():
            env = {k: float(rc["env"][k]) for k in VARIABLES}
            room = Room(rid, env, dict(env, illuminance=float(rc["env"]["illuminance"])), {})
            for dc in rc["devices"]:
                if dc["type"] not in DEVICE_TYPES:
                    raise ValueError(f"device {dc['id']}: unknown type {dc['type']!r}; known: {sorted(DEVICE_TYPES)}")
                attrs = {c: dict(ATTRIBUTES[c]) for c in DEVICE_TYPES[dc["type"]]}
                for key, value in dc.get("attributes", {}).items():
                    cluster, name = key.split(".")
                    attrs[cluster][name] = value
                dev = Device(dc["id"], dc["type"], rid, attrs, int(dc.get("cycle_minutes", 0) * 60))
                if "OperationalState" in attrs and attrs["OperationalState"]["OperationalState"] in (RUNNING, PAUSED):
                    dev.remaining = int(dc["remaining_s"] * TICKS_PER_SECOND)
                room.devices[dev.id] = dev
            rooms[rid] = room
        home = cls(rooms, parse_clock(cfg["start"]), **options)
        for dev in home.devices.values():
            home._sync_countdown(dev)
        return home

    # -- reading --
    def illuminance(self, room: Room) -> float:
        lux = room.baseline["illuminance"]
        for dev in room.devices.values():
            if dev.attrs.get("OnOff", {}).get("OnOff"):
                if dev.type == "on_off_light":
                    lux += 500
                elif dev.type == "dimmable_light":
                    lux += 500 * dev.attrs["LevelControl"]["CurrentLevel"] / 254
        return lux

    def value(self, dev: Device, cluster: str, attribute: str):
        if cluster == "Thermostat" and attribute == "LocalTemperature":
            return round(self.rooms[dev.room].env["temperature"])
        if cluster == "RelativeHumidityMeasurement" and attribute == "MeasuredValue":
            return round(self.rooms[dev.room].env["humidity"])
        if cluster == "Pm10ConcentrationMeasurement" and attribute == "MeasuredValue":
            return round(self.rooms[dev.room].env["pm10"], 2)
        return dev.attrs[cluster][attribute]

    def room_state(self, room: Room) -> dict:
        """Human units, as the tool reports them."""
        return {"temperature_c": round(room.env["temperature"] / 100, 2), "humidity_pct": round(room.env["humidity"] / 100, 2),
                "illuminance_lux": round(self.illuminance(room), 1), "pm10_ugm3": round(room.env["pm10"], 2)}

    def state(self) -> dict:
        """Everything a call may change, as plain data (tests compare it before and after a refused call)."""
        return copy.deepcopy({"now": self.now, "env": {r: room.env for r, room in self.rooms.items()},
                              "devices": {d.id: (d.attrs, d.remaining) for d in self.devices.values()},
                              "workflows": self.workflows, "queue": self.queue})

    def device(self, device_id) -> Device:
        if device_id not in self.devices:
            raise CallError("NOT_FOUND", f"no device {device_id!r}; get_room_devices lists a room's devices")
        return self.devices[device_id]

    def room(self, room_id) -> Room:
        if room_id not in self.rooms:
            raise CallError("NOT_FOUND", f"no room {room_id!r}; rooms: {sorted(self.rooms)}")
        return self.rooms[room_id]

    @staticmethod
    def cluster_of(dev: Device, cluster) -> dict:
        if cluster not in dev.attrs:
            raise CallError("UNSUPPORTED_CLUSTER", f"{dev.id} ({dev.type}) has no cluster {cluster!r}; "
                            f"its clusters: {sorted(dev.attrs)}")
        return dev.attrs[cluster]

    # -- changing (validated in full first, so a refused call changes nothing) --
    def _set(self, dev: Device, cluster: str, attribute: str, value) -> None:
        if dev.attrs[cluster][attribute] != value:
            dev.attrs[cluster][attribute] = value
            self.changes.append((self.now, dev.id, f"{cluster}.{attribute}", value))

    def _sync_countdown(self, dev: Device) -> None:
        if "OperationalState" in dev.attrs:
            running = dev.attrs["OperationalState"]["OperationalState"] in (RUNNING, PAUSED)
            self._set(dev, "OperationalState", "CountdownTime",
                      -(-dev.remaining // TICKS_PER_SECOND) if running else None)

    def _requires_on(self, dev: Device, what: str) -> None:
        if "OnOff" in dev.attrs and not dev.attrs["OnOff"]["OnOff"]:
            raise CallError("INVALID_IN_STATE", f"{dev.id} is off: turn it on (OnOff.On) before {what}")

    def write_attribute(self, device_id, cluster, attribute, value) -> dict:
        dev = self.device(device_id)
        attrs = self.cluster_of(dev, cluster)
        if attribute not in attrs:
            raise CallError("UNSUPPORTED_ATTRIBUTE", f"{cluster} of {dev.id} has no attribute {attribute!r}; "
                            f"its attributes: {sorted(attrs)}")
        check_write(dev.type, cluster, attribute, value)
        self._requires_on(dev, f"writing {cluster}.{attribute}")
        self._set(dev, cluster, attribute, value)
        if (cluster, attribute) == ("FanControl", "FanMode"):
            self._set(dev, cluster, "PercentSetting", FAN_MODE_PERCENT[value])
        if cluster == "FanControl":
            self._set(dev, cluster, "PercentCurrent", attrs["PercentSetting"])
        return {}

    def execute_command(self, device_id, cluster, command, args=None) -> dict:
        dev = self.device(device_id)
        self.cluster_of(dev, cluster)
        cmd = parse_command(cluster, command, {} if args is None else args)
        op = dev.attrs.get("OperationalState", {}).get("OperationalState")
        if cluster == "OnOff":
            on = {"On": True, "Off": False, "Toggle": not dev.attrs["OnOff"]["OnOff"]}[command]
            self._set(dev, "OnOff", "OnOff", on)
            if not on and op in (RUNNING, PAUSED):  # switching an appliance off ends its cycle
                dev.remaining = 0
                self._set(dev, "OperationalState", "OperationalState", STOPPED)
                self._sync_countdown(dev)
        elif cluster == "LevelControl":
            self._requires_on(dev, "MoveToLevel")
            self._set(dev, cluster, "CurrentLevel", int(cmd.level))
        elif cluster == "WindowCovering":
            target = {"UpOrOpen": 0, "DownOrClose": 10000}.get(command, getattr(cmd, "liftPercent100thsValue", 0))
            self._set(dev, cluster, "TargetPositionLiftPercent100ths", int(target))
            self._set(dev, cluster, "CurrentPositionLiftPercent100ths", int(target))
        else:  # OperationalState
            allowed = {"Start": (STOPPED, RUNNING), "Stop": (STOPPED, RUNNING, PAUSED), "Pause": (RUNNING,),
                       "Resume": (PAUSED,)}[command]
            if op not in allowed:
                raise CallError("INVALID_IN_STATE", f"{dev.id} cannot {command} while "
                                f"{Matter.OperationalState.Enums.OperationalStateEnum(op).name[1:].lower()}")
            self._requires_on(dev, command)
            if command == "Start" and op == STOPPED:
                dev.remaining = dev.cycle_s * TICKS_PER_SECOND
            if command == "Stop":
                dev.remaining = 0
            self._set(dev, cluster, "OperationalState",
                      {"Start": RUNNING, "Stop": STOPPED, "Pause": PAUSED, "Resume": RUNNING}[command])
            self._sync_countdown(dev)
        return {}

    # -- workflows --
    ACTIONS = ("write_attribute", "execute_command")

    def schedule_workflow(self, start_time, actions) -> dict:
        at = parse_clock(start_time)
        if at <= self.now:
            raise CallError("CONSTRAINT_ERROR", f"start_time {start_time} is not after the current time {clock(self.now)}")
        if not isinstance(actions, list) or not actions or not all(
                isinstance(a, dict) and a.get("tool") in self.ACTIONS and isinstance(a.get("args"), dict) for a in actions):
            raise CallError("INVALID_COMMAND", f"actions must be a non-empty list of {{'tool': one of {list(self.ACTIONS)}, "
                            "'args': {...}}")
        if self.validate_on_schedule:  # the control: each action tried on a copy of the home now, errors returned now
            for a in actions:
                trial = copy.deepcopy(self)
                trial.validate_on_schedule = False
                out = trial.call(a["tool"], a["args"])
                if out["status"] not in ("SUCCESS", "INVALID_IN_STATE"):  # the state may differ then; the arguments may not
                    raise CallError(out["status"], f"action {a['tool']}: {out['error']}")
        wid = f"wf-{len(self.workflows) + 1}"
        self.workflows[wid] = {"workflow_id": wid, "start_time": clock(at), "actions": copy.deepcopy(actions),
                               "state": "registered"}
        heapq.heappush(self.queue, (at, len(self.workflows), wid))
        return {"workflow_id": wid, "state": "registered"}

    def cancel_workflow(self, workflow_id) -> dict:
        wf = self.workflows.get(workflow_id)
        if wf is None or wf["state"] != "registered":
            raise CallError("NOT_FOUND", f"no registered workflow {workflow_id!r}; get_workflow_list lists them")
        wf["state"] = "cancelled"
        return {}

    # -- time --
    def next_event(self) -> float:
        ends = [self.now + d.remaining for d in self.devices.values()
                if d.remaining and d.attrs["OperationalState"]["OperationalState"] == RUNNING]
        return min(ends + [self.queue[0][0] if self.queue else INF])

    def advance(self, seconds: float) -> None:
        """Move virtual time on, firing appliance cycle ends and workflows at their ticks."""
        end = self.now + round(seconds * TICKS_PER_SECOND)
        while self.now < end:
            step = int(min(end, self.next_event()) - self.now)
            self._flow(step)
            self.now += step
            for dev in self.devices.values():
                if dev.attrs.get("OperationalState", {}).get("OperationalState") == RUNNING:
                    dev.remaining -= step
                    if dev.remaining <= 0:
                        dev.remaining = 0
                        self._set(dev, "OperationalState", "OperationalState", STOPPED)
                    self._sync_countdown(dev)
            while self.queue and self.queue[0][0] <= self.now:
                _, _, wid = heapq.heappop(self.queue)
                if self.workflows[wid]["state"] != "registered":
                    continue
                self.workflows[wid]["state"] = "executed"  # what happened inside is not reported (delayed feedback)
                for action in self.workflows[wid]["actions"]:
                    self.call(action["tool"], action["args"])  # its answer goes nowhere

    def _flow(self, ticks: int) -> None:
        """The continuous variables over `ticks` ticks with no discrete change inside."""
        for room in self.rooms.values():
            for var in VARIABLES:
                v, left = room.env[var], ticks
                while left > 0:
                    slope, intercept, lo, hi = regime(room, var, v)
                    jump = min(left, safe_ticks(v, slope, intercept, lo, hi)) if self.exact_batch else 1
                    v = tick_value(v, slope, intercept, var) if jump == 1 else closed_form(v, slope, intercept, jump)
                    left -= jump
                room.env[var] = v

    # -- the agents' tools (the paper's names) --
    def call(self, tool: str, args: dict | None = None) -> dict:
        """One tool call: {"status": "SUCCESS", ...result} or {"status": <Matter status>, "error": message}."""
        handler = TOOLS_BY_NAME.get(tool)
        if handler is None:
            return {"status": "UNSUPPORTED_COMMAND", "error": f"no tool {tool!r}; tools: {sorted(TOOLS_BY_NAME)}"}
        args = {} if args is None else args
        if not isinstance(args, dict):
            return {"status": "INVALID_COMMAND", "error": f"{tool}: arguments must be a JSON object, got {args!r}"}
        problem = argument_problem(tool, args)
        if problem:
            return {"status": "INVALID_COMMAND", "error": f"{tool}: {problem}"}
        try:  # a JSON round trip: an observation never shares an object with the simulator's tables
            return json.loads(json.dumps({"status": "SUCCESS", **handler(self, **args)}))
        except CallError as err:
            return {"status": err.status, "error": str(err)}

    def tool_get_rooms(self):
        return {"rooms": sorted(self.rooms)}

    def tool_get_room_devices(self, room_id):
        return {"devices": [{"device_id": d.id, "type": d.type} for d in self.room(room_id).devices.values()]}

    def tool_get_room_states(self, room_id):
        return {"room_id": room_id, "state": self.room_state(self.room(room_id))}

    def tool_get_device_structure(self, device_id):
        dev = self.device(device_id)
        return {"device_id": dev.id, "type": dev.type, "clusters": {
            c: {"attributes": sorted(attrs), "writable": {a: rule for (cc, a), rule in WRITABLE.items() if cc == c},
                "commands": {k: {f: list(r) for f, r in v.items()} for k, v in COMMANDS.get(c, {}).items()}}
            for c, attrs in dev.attrs.items()}}

    def tool_get_attribute(self, device_id, cluster, attribute):
        dev = self.device(device_id)
        attrs = self.cluster_of(dev, cluster)
        if attribute not in attrs:
            raise CallError("UNSUPPORTED_ATTRIBUTE", f"{cluster} of {dev.id} has no attribute {attribute!r}; "
                            f"its attributes: {sorted(attrs)}")
        return {"value": self.value(dev, cluster, attribute)}

    def tool_get_all_attributes(self, device_id):
        dev = self.device(device_id)
        return {"attributes": {f"{c}.{a}": self.value(dev, c, a) for c, attrs in dev.attrs.items() for a in attrs}}

    def tool_write_attribute(self, device_id, cluster, attribute, value):
        return self.write_attribute(device_id, cluster, attribute, value)

    def tool_execute_command(self, device_id, cluster, command, args=None):
        return self.execute_command(device_id, cluster, command, args)

    def tool_get_environment_control_rules(self):
        return {"rules": CONTROL_RULES}

    def tool_schedule_workflow(self, start_time, actions):
        return self.schedule_workflow(start_time, actions)

    def tool_get_workflow_list(self):
        return {"workflows": [{k: w[k] for k in ("workflow_id", "start_time", "state")} for w in self.workflows.values()]}

    def tool_cancel_workflow(self, workflow_id):
        return self.cancel_workflow(workflow_id)

    def tool_get_current_time(self):
        return {"time": clock(self.now)}

    def tool_finish(self, answer):
        return {"answer": answer}


CONTROL_RULES = [  # what get_environment_control_rules answers: which device moves which variable, how
    {"variable": "temperature", "direction": "down", "device_type": "air_conditioner",
     "how": "On; Thermostat.SystemMode 3 (cool); OccupiedCoolingSetpoint below the room; FanControl.PercentSetting high"},
    {"variable": "temperature", "direction": "up", "device_type": "heat_pump",
     "how": "On; Thermostat.SystemMode 4 (heat); OccupiedHeatingSetpoint above the room; FanControl.PercentSetting high"},
    {"variable": "temperature", "direction": "up", "device_type": "air_conditioner",
     "how": "On; Thermostat.SystemMode 4 (heat); OccupiedHeatingSetpoint above the room; FanControl.PercentSetting high"},
    {"variable": "humidity", "direction": "up", "device_type": "humidifier", "how": "On; FanControl.PercentSetting high"},
    {"variable": "humidity", "direction": "down", "device_type": "dehumidifier", "how": "On; FanControl.PercentSetting high"},
    {"variable": "pm10", "direction": "down", "device_type": "air_purifier", "how": "On; FanControl.PercentSetting high"},
    {"variable": "illuminance", "direction": "up", "device_type": "on_off_light", "how": "On"},
    {"variable": "illuminance", "direction": "up", "device_type": "dimmable_light", "how": "On; LevelControl.MoveToLevel high"},
]


def _p(props: dict, required=None) -> dict:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required,
            "additionalProperties": False}


_S, _DEV = {"type": "string"}, {"device_id": {"type": "string"}}
_ACTION = {"type": "object", "properties": {"tool": {"enum": list(Home.ACTIONS)}, "args": {"type": "object"}},
           "required": ["tool", "args"]}
TOOL_SPECS = {  # function-calling JSON (OpenAI's "tools" format): what an LLM agent is shown
    "get_rooms": ("List the home's rooms.", _p({})),
    "get_room_devices": ("List a room's devices and their types.", _p({"room_id": _S})),
    "get_room_states": ("A room's temperature (degC), humidity (%RH), illuminance (lux) and PM10 (ug/m3).",
                        _p({"room_id": _S})),
    "get_device_structure": ("A device's Matter clusters, attributes, writable attributes with their constraints, and "
                             "commands with their arguments' ranges.", _p(_DEV)),
    "get_attribute": ("Read one attribute, e.g. OperationalState.CountdownTime (seconds left of a cycle).",
                      _p(_DEV | {"cluster": _S, "attribute": _S})),
    "get_all_attributes": ("Read every attribute of a device.", _p(_DEV)),
    "write_attribute": ("Write a writable attribute (e.g. Thermostat.OccupiedCoolingSetpoint in centi-degC).",
                        _p(_DEV | {"cluster": _S, "attribute": _S, "value": {"type": "integer"}})),
    "execute_command": ("Run a Matter command, e.g. OnOff.On, LevelControl.MoveToLevel {level}, OperationalState.Start.",
                        _p(_DEV | {"cluster": _S, "command": _S, "args": {"type": "object"}},
                           ["device_id", "cluster", "command"])),
    "get_environment_control_rules": ("Which device types move which room variable, and how.", _p({})),
    "schedule_workflow": ("Run actions (write_attribute / execute_command calls) at a later time HH:MM:SS. "
                          "Returns a receipt only: the actions are not checked now.",
                          _p({"start_time": _S, "actions": {"type": "array", "items": _ACTION}})),
    "get_workflow_list": ("List scheduled workflows and their states.", _p({})),
    "cancel_workflow": ("Cancel a registered workflow.", _p({"workflow_id": _S})),
    "get_current_time": ("The current time HH:MM:SS.", _p({})),
    "finish": ("End the episode with the final answer to the user (for a request that cannot be done, start it "
               "with INFEASIBLE: and say why).", _p({"answer": _S})),
}
TOOL_SPECS = {name: {"name": name, "description": d, "parameters": p} for name, (d, p) in TOOL_SPECS.items()}
TOOLS_BY_NAME = {name: getattr(Home, f"tool_{name}") for name in TOOL_SPECS}


@lru_cache(maxsize=None)
def _argument_validator(tool: str):
    import jsonschema

    return jsonschema.Draft202012Validator(TOOL_SPECS[tool]["parameters"])


def argument_problem(tool: str, args: dict) -> str | None:
    """What is wrong with a call's arguments against the tool's function-calling schema (names and types), or None."""
    errors = sorted(_argument_validator(tool).iter_errors(args), key=lambda e: list(map(str, e.absolute_path)))
    return "; ".join(f"{'.'.join(map(str, e.absolute_path)) + ': ' if e.absolute_path else ''}{e.message}"
                     for e in errors) or None
