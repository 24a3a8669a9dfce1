"""Agents under one ReAct loop, and the loop (`run_episode`).

Each step of an agent is {"thought", "action", "action_input"}; the action is one of the simulator's tools, its
observation the tool's JSON answer; every step moves virtual time on by 5 s (so "now" moves while the agent
works); `finish` ends the episode with an answer; an agent gets at most `max_steps` steps.

Scripted agents are generators: they yield a Call and are sent its observation. They read the episode's `parse`
(the request as a perfect semantic parser would give it) and have three capabilities, switched on one by one:
  * ReactiveAgent: finds the devices and carries every request out at once; never checks, never schedules (a
    standard model without temporal reasoning);
  * VerifyingAgent: + checks that devices exist, values fit the device's constraints and appliances are in a
    state that allows the request, and answers INFEASIBLE with the reason otherwise;
  * PlannerAgent: + temporal reasoning (reads the clock and CountdownTime, computes times, schedules workflows,
    spots past and contradictory times) and reads get_environment_control_rules for implicit intents (a
    reasoning model: more steps).
Noise (the spec's model of LLM slips): each argument an agent writes (a device id, a value) is slipped with
probability eps, the kinds of slip that fail loudly when executed (an id that does not exist, a value in the
wrong unit); on an error observation the agent retries the call, at most twice. A scheduled action's slip is
not seen: schedule_workflow answers with a receipt.
RandomAgent makes random valid-looking calls and finishes (the paper's < 7 B models score about 0).
"""
from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np

from . import episodes as E
from . import environment, matter, sim

STEP_SECONDS = 5     # virtual time per agent step (spec 3.3)
RETRIES = 2          # retries of a call that answered an error


@dataclasses.dataclass
class Call:
    thought: str
    action: str
    action_input: dict
    retry: bool = False  # this call repeats one that answered an error


# ---- the loop --------------------------------------------------------------------------------------------

def run_episode(ep: dict, agent, max_steps: int = 20, seed: int = 0, validate_on_schedule: bool = False) -> tuple[dict, list]:
    """(result row, trajectory) of one agent on one episode; the judge decides success."""
    initial = sim.Home.from_config(ep["initial_home_config"])
    home = sim.Home.from_config(ep["initial_home_config"], validate_on_schedule=validate_on_schedule)
    rng = np.random.default_rng([seed, int(ep["meta"]["id"].rsplit("-", 1)[1]), E.CATEGORIES.index(ep["meta"]["category"])])
    policy = agent.policy(ep, rng)
    steps, answer, started = [], "", time.perf_counter()
    try:
        call = next(policy)
        while len(steps) < max_steps:
            obs = home.call(call.action, call.action_input)
            steps.append({"thought": call.thought, "action": call.action, "action_input": call.action_input,
                          "observation": obs, "retry": call.retry})
            if call.action == "finish" and obs["status"] == "SUCCESS":  # a refused finish is an error to see
                answer = obs["answer"]
                break
            home.advance(STEP_SECONDS)
            call = policy.send(obs)
    except StopIteration:
        pass
    wall = time.perf_counter() - started
    finished = bool(steps) and steps[-1]["action"] == "finish" and steps[-1]["observation"]["status"] == "SUCCESS"
    untimed = finished and E.judge(ep, copy.deepcopy(home), answer, initial, any_time=True)
    success = finished and E.judge(ep, home, answer, initial)
    errors = [s for s in steps if s["observation"].get("status") != "SUCCESS"]
    row = {"episode": ep["meta"]["id"], "category": ep["meta"]["category"], "success": bool(success),
           "success_any_time": bool(untimed),
           "steps": len(steps), "virtual_s": len(steps) * STEP_SECONDS, "wall_s": wall, "errors": len(errors),
           "recovered_error": any(s["retry"] and s["observation"].get("status") == "SUCCESS" for s in steps),
           "scheduled": sum(s["action"] == "schedule_workflow" for s in steps), "answer": answer}
    return row, steps


# ---- scripted agents ---------------------------------------------------------------------------------------

NAIVE = {("temperature", "down"): "fan", ("temperature", "up"): "heat_pump", ("humidity", "down"): "dehumidifier",
         ("humidity", "up"): "humidifier", ("pm10", "down"): "air_purifier", ("illuminance", "up"): "light"}
READS = {"on_off": ("OnOff", "OnOff"), "cool_setpoint": ("Thermostat", "OccupiedCoolingSetpoint"),
         "fan_speed": ("FanControl", "PercentSetting"), "minutes_left": ("OperationalState", "CountdownTime")}
FULL = {"do": "fan_speed", "value": 100}
STRONG = {  # how the planner drives a device it chose from the control rules (full effect, as the rules' "how" says)
    ("air_conditioner", "down"): [{"do": "cool", "value": 16}, FULL], ("air_conditioner", "up"): [{"do": "heat", "value": 30}, FULL],
    ("heat_pump", "up"): [{"do": "heat", "value": 30}, FULL], ("humidifier", "up"): [FULL], ("dehumidifier", "down"): [FULL],
    ("air_purifier", "down"): [FULL], ("on_off_light", "up"): [{"do": "on"}], ("dimmable_light", "up"): [{"do": "brightness", "value": 100}]}


class Infeasible(Exception):
    def __init__(self, reason: str, why: str):
        super().__init__(f"INFEASIBLE: {reason} ({why})")


class Scripted:
    verify = temporal = False
    name = "scripted"

    def __init__(self, eps: float = 0.0):
        self.eps = eps

    # -- the policy: a generator of Calls --
    def policy(self, ep: dict, rng: np.random.Generator):
        self.rng, self.rooms = rng, {}
        handler = getattr(self, f"do_{ep['parse']['type']}")
        try:
            answer = yield from handler(ep["parse"])
        except Infeasible as err:
            answer = str(err)
        yield Call("done", "finish", {"answer": answer})

    def ask(self, thought: str, action: str, args: dict | None = None):
        return (yield Call(thought, action, args or {}))

    def act(self, thought: str, tool: str, args: dict):
        """A call that writes: slipped with probability eps, retried on an error observation."""
        for attempt in range(1 + RETRIES):
            obs = yield Call(thought, tool, self.slip(tool, args), retry=attempt > 0)
            if obs.get("status") == "SUCCESS":
                break
        return obs

    def slip(self, tool: str, args: dict) -> dict:
        if tool == "schedule_workflow":
            return args | {"actions": [a | {"args": self.slip(a["tool"], a["args"])} for a in args["actions"]]}
        out = dict(args)
        if self.rng.random() < self.eps:  # an id that does not exist
            out["device_id"] = out["device_id"] + "x"
        if self.rng.random() < self.eps:  # a value in the wrong unit
            if "value" in out:
                out["value"] = out["value"] // 100 if out["value"] >= 100 else out["value"] * 100 + 1
            elif "args" in out:
                out["args"] = {k: v * 100 + 1 for k, v in out["args"].items()}
        return out

    # -- reading the home --
    def devices_in(self, room: str):
        if room not in self.rooms:
            obs = yield from self.ask(f"which devices are in the {room}?", "get_room_devices", {"room_id": room})
            self.rooms[room] = obs.get("devices", [])
        return self.rooms[room]

    def find(self, room: str, noun: str, types=None):
        """The room's device of that noun (or of one of `types`), None when there is none."""
        devices = yield from self.devices_in(room)
        match = [d for d in devices if (d["type"] in types if types else E.kind_of(d["type"]) == noun)]
        return match[0] if match else None

    def need(self, room: str, noun: str):
        dev = yield from self.find(room, noun)
        if dev is None and self.verify:
            raise Infeasible("missing_device", f"no {E.NOUN[noun]} in the {E.room_name(room)}")
        return dev

    def now(self) -> int:
        obs = yield from self.ask("what time is it?", "get_current_time")
        return sim.parse_clock(obs["time"])

    def read(self, dev: dict, cluster: str, attribute: str):
        obs = yield from self.ask(f"read {cluster}.{attribute} of {dev['device_id']}", "get_attribute",
                                  {"device_id": dev["device_id"], "cluster": cluster, "attribute": attribute})
        return obs.get("value")

    # -- acting --
    def check(self, action: dict, dev: dict):
        """The verifying agents' checks before acting: the value fits, the appliance's state allows it."""
        if not self.verify:
            return
        if action["do"] in ("pause",):
            state = yield from self.read(dev, "OperationalState", "OperationalState")
            if state != matter.RUNNING:
                raise Infeasible("invalid_state", f"the {E.NOUN[action['device']]} is not running")
        if "value" in action:
            structure = yield from self.ask(f"what can {dev['device_id']} take?", "get_device_structure",
                                            {"device_id": dev["device_id"]})
            for tool, args in E.action_calls(action, dev["device_id"]):
                lo_hi = constraint(structure, tool, args)
                value = args.get("value", args.get("args", {}).get("level"))
                if lo_hi and value is not None and not lo_hi[0] <= value <= lo_hi[1]:
                    raise Infeasible("out_of_range", f"{value} is outside {lo_hi} for {dev['device_id']}")

    def carry_out(self, action: dict, dev: dict):
        for tool, args in E.action_calls(action, dev["device_id"]):
            yield from self.act(f"{action['do']} {dev['device_id']}", tool, args)

    def schedule(self, at: int, calls: list[tuple[str, dict]]):
        actions = [{"tool": t, "args": a} for t, a in calls]
        yield from self.act(f"schedule at {sim.clock(at)}", "schedule_workflow",
                            {"start_time": sim.clock(at), "actions": actions})

    # -- one handler per request type --
    def do_read_room(self, p):
        obs = yield from self.ask(f"read the {p['room']}", "get_room_states", {"room_id": p["room"]})
        key = E.VARIABLE_UNITS.get(p["variable"], (None,))[0]
        value = obs.get("state", {}).get(key)
        if value is None:
            if self.verify:
                raise Infeasible("missing_attribute", f"no sensor reports {p['variable']}")
            return "I could not find it."
        return f"{value}"

    def do_read_device(self, p):
        dev = yield from self.need(p["room"], p["device"])
        if dev is None:
            return "I could not find it."
        value = yield from self.read(dev, *READS[p["what"]])
        return {"on_off": lambda v: "on" if v else "off", "cool_setpoint": lambda v: f"{v / 100}",
                "fan_speed": lambda v: f"{v}", "minutes_left": lambda v: f"{(v or 0) / 60:.1f}"}[p["what"]](value)

    def do_intent(self, p):
        if self.temporal:  # the planner asks which devices move the variable and drives one fully
            rules = yield from self.ask("which devices move it?", "get_environment_control_rules")
            types = [r["device_type"] for r in rules["rules"] if (r["variable"], r["direction"]) == (p["variable"], p["direction"])]
            dev = yield from self.find(p["room"], None, types)
            if dev is None:
                raise Infeasible("no_capable_device", f"nothing in the {p['room']} moves {p['variable']} {p['direction']}")
            actions = [{"room": p["room"], "device": E.kind_of(dev["type"])} | a for a in STRONG[(dev["type"], p["direction"])]]
        else:  # a guess at the device, switched on as it is
            dev = yield from self.find(p["room"], NAIVE[(p["variable"], p["direction"])])
            if dev is None:
                if self.verify:
                    raise Infeasible("no_capable_device", f"no device for {p['variable']} in the {p['room']}")
                return "Done."
            actions = [{"room": p["room"], "device": E.kind_of(dev["type"]), "do": "on"}]
        for action in actions:
            yield from self.carry_out(action, dev)
        return "Done."

    def resolve(self, actions: list[dict]):
        """(action, device) for every action whose device exists and passes the checks."""
        out = []
        for a in actions:
            dev = yield from self.need(a["room"], a["device"])
            if dev is not None:
                yield from self.check(a, dev)
                out.append((a, dev))
        return out

    def do_control(self, p):
        for a, dev in (yield from self.resolve(p["actions"])):
            yield from self.carry_out(a, dev)
        return "Done."

    def do_schedule(self, p):
        at = (yield from self.now()) if self.temporal else None  # first: "in 10 minutes" counts from the query
        todo = yield from self.resolve([s["action"] for s in p["steps"]])
        if not self.temporal:
            for a, dev in todo:
                yield from self.carry_out(a, dev)
            return "Done."
        for step, (a, dev) in zip(p["steps"], todo):
            if "at_clock" in step:
                when = sim.parse_clock(step["at_clock"])
                if when <= at:
                    raise Infeasible("past_time", f"{step['at_clock']} has passed (it is {sim.clock(at)})")
                at = when
            else:
                at += step["delay_min"] * 60 * environment.TICKS_PER_SECOND
            yield from self.schedule(at, E.action_calls(a, dev["device_id"]))
        return "Scheduled."

    def appliance_end(self, dev: dict):
        """The tick at which a running appliance finishes (its CountdownTime from now)."""
        left = yield from self.read(dev, "OperationalState", "CountdownTime")
        now = yield from self.now()
        return now - STEP_SECONDS * environment.TICKS_PER_SECOND + (left or 0) * environment.TICKS_PER_SECOND

    def do_after_appliance(self, p):
        anchor = yield from self.need(p["anchor"]["room"], p["anchor"]["device"])
        if self.verify and anchor is not None:
            state = yield from self.read(anchor, "OperationalState", "OperationalState")
            if state != matter.RUNNING:
                raise Infeasible("not_running", f"the {E.NOUN[p['anchor']['device']]} is not running")
        [todo] = (yield from self.resolve([p["action"]])) or [None]
        if todo is None:
            return "Done."
        a, dev = todo
        if not self.temporal:
            yield from self.carry_out(a, dev)
            return "Done."
        end = yield from self.appliance_end(anchor)
        yield from self.schedule(end + p["delay_min"] * 60 * environment.TICKS_PER_SECOND, E.action_calls(a, dev["device_id"]))
        return "Scheduled."

    def do_coordinate(self, p):
        washer = yield from self.need("utility_room", "laundry_washer")
        dryer = yield from self.need("utility_room", "laundry_dryer")
        if p["variant"] == "contradiction" and self.temporal:
            raise Infeasible("contradiction", f"pausing {p['early_min']} minutes before the dryer starts")
        start = {"room": "utility_room", "device": "laundry_dryer", "do": "start"}
        light = None
        if p["variant"] == "start_at_end_light_off":
            light = yield from self.need("utility_room", "light")
        if not self.temporal:  # everything now
            yield from self.carry_out(start, dryer)
            if light:
                yield from self.carry_out({"do": "off", "room": "utility_room", "device": "light"}, light)
            return "Done."
        end = yield from self.appliance_end(washer)
        if p["variant"] == "start_now_pause_at_end":
            yield from self.carry_out(start, dryer)
            yield from self.schedule(end, E.action_calls({"do": "pause"}, dryer["device_id"]))
        else:
            calls = E.action_calls(start, dryer["device_id"]) + E.action_calls({"do": "off"}, light["device_id"])
            yield from self.schedule(end, calls)
        return "Scheduled."


def constraint(structure: dict, tool: str, args: dict):
    """The [lo, hi] a write or command argument must lie in, from get_device_structure."""
    cluster = structure.get("clusters", {}).get(args.get("cluster"), {})
    if tool == "write_attribute":
        return cluster.get("writable", {}).get(args["attribute"], {}).get("range")
    fields = cluster.get("commands", {}).get(args.get("command"), {})
    return next(iter(fields.values()), None)


class ReactiveAgent(Scripted):
    name = "reactive"


class VerifyingAgent(Scripted):
    name, verify = "verifying", True


class PlannerAgent(Scripted):
    name, verify, temporal = "planner", True, True


class RandomAgent:
    """Random calls on the home's real rooms and devices, then a finish with a random answer."""
    name = "random"
    PROBES = ["get_room_states", "get_all_attributes", "write_attribute", "execute_command", "get_current_time"]

    def policy(self, ep: dict, rng: np.random.Generator):
        rooms = (yield Call("look around", "get_rooms", {})).get("rooms", [])
        devices = []
        for _ in range(int(rng.integers(2, 10))):
            room = str(rng.choice(rooms))
            if not devices or rng.random() < 0.3:
                devices = (yield Call("look", "get_room_devices", {"room_id": room})).get("devices", []) or devices
                continue
            dev = devices[int(rng.integers(len(devices)))]["device_id"]
            tool = str(rng.choice(self.PROBES))
            args = {"get_room_states": {"room_id": room}, "get_all_attributes": {"device_id": dev},
                    "write_attribute": {"device_id": dev, "cluster": "FanControl", "attribute": "PercentSetting",
                                        "value": int(rng.integers(0, 101))},
                    "execute_command": {"device_id": dev, "cluster": "OnOff", "command": str(rng.choice(["On", "Off"]))},
                    "get_current_time": {}}[tool]
            yield Call("try something", tool, args)
        yield Call("done", "finish", {"answer": str(rng.choice(["Done.", "OK", str(int(rng.integers(0, 100)))]))})


AGENTS = {"random": RandomAgent, "reactive": ReactiveAgent, "verifying": VerifyingAgent, "planner": PlannerAgent}


def make_agent(kind: str, eps: float = 0.0):
    return RandomAgent() if kind == "random" else AGENTS[kind](eps)
