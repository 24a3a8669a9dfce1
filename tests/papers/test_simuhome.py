"""Tests for ``simuhome`` (workflow/papers/simuhome): the simulator against closed forms and tick-by-tick stepping,
bad input refused with a Matter status and no change, appliance cycles and workflows, the episodes against their
schema, the judge's clock, the agents' ladder, and the evaluate step's metrics on hand-made runs."""
import copy
import math

import pandas as pd
import pytest

from workflow.core.params import ParamsError
from workflow.papers.simuhome import agents as A
from workflow.papers.simuhome import episodes as E
from workflow.papers.simuhome import evaluate as V
from workflow.papers.simuhome import environment, matter, plan, selftest, sim


def home_config(devices, temperature=3000, start="08:00:00"):
    return {"start": start, "rooms": {"room": {"env": {"temperature": temperature, "humidity": 5000, "illuminance": 200,
                                                         "pm10": 60}, "devices": devices}}}


def light(did="l1", on=False):
    return {"id": did, "type": "dimmable_light", "attributes": {"OnOff.OnOff": on, "LevelControl.CurrentLevel": 100}}


def appliance(did="dw", kind="dishwasher", running_s=None):
    dev = {"id": did, "type": kind, "cycle_minutes": 60, "attributes": {"OnOff.OnOff": True}}
    if running_s:
        dev["attributes"]["OperationalState.OperationalState"] = matter.RUNNING
        dev["remaining_s"] = running_s
    return dev


@pytest.fixture()
def home():
    return sim.Home.from_config(home_config([light(), appliance(), selftest.ac("ac", 2500, 100)]))


# ---- the simulator ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool, args, status", [
    ("write_attribute", {"device_id": "nope", "cluster": "OnOff", "attribute": "OnOff", "value": 1}, "NOT_FOUND"),
    ("write_attribute", {"device_id": "ac", "cluster": "Thermostat", "attribute": "OccupiedCoolingSetpoint", "value": 9000},
     "CONSTRAINT_ERROR"),
    ("write_attribute", {"device_id": "ac", "cluster": "Thermostat", "attribute": "SystemMode", "value": 5}, "CONSTRAINT_ERROR"),
    ("write_attribute", {"device_id": "ac", "cluster": "Thermostat", "attribute": "Humidity", "value": 1}, "UNSUPPORTED_ATTRIBUTE"),
    ("write_attribute", {"device_id": "ac", "cluster": "Thermostat", "attribute": "LocalTemperature", "value": 1}, "UNSUPPORTED_WRITE"),
    ("write_attribute", {"device_id": "ac", "cluster": "FanControl", "attribute": "PercentSetting", "value": "50"}, "INVALID_COMMAND"),
    ("write_attribute", {"device_id": "l1", "cluster": "Thermostat", "attribute": "SystemMode", "value": 3}, "UNSUPPORTED_CLUSTER"),
    ("execute_command", {"device_id": "l1", "cluster": "LevelControl", "command": "MoveToLevel", "args": {"level": 50}},
     "INVALID_IN_STATE"),  # the light is off: a dependency
    ("execute_command", {"device_id": "l1", "cluster": "LevelControl", "command": "MoveToLevel", "args": {"level": 999}},
     "CONSTRAINT_ERROR"),
    ("execute_command", {"device_id": "l1", "cluster": "LevelControl", "command": "MoveToLevel", "args": {"lvl": 9}},
     "INVALID_COMMAND"),
    ("execute_command", {"device_id": "l1", "cluster": "LevelControl", "command": "Jump"}, "UNSUPPORTED_COMMAND"),
    ("execute_command", {"device_id": "dw", "cluster": "OperationalState", "command": "Pause"}, "INVALID_IN_STATE"),
    ("execute_command", {"device_id": "l1", "cluster": "OnOff", "command": "On", "args": "on"}, "INVALID_COMMAND"),
    ("schedule_workflow", {"start_time": "07:00:00", "actions": [{"tool": "execute_command", "args": {}}]}, "CONSTRAINT_ERROR"),
    ("schedule_workflow", {"start_time": "25:00", "actions": []}, "INVALID_COMMAND"),
    ("schedule_workflow", {"start_time": "09:00:00", "actions": [{"tool": "rm", "args": {}}]}, "INVALID_COMMAND"),
    ("get_room_states", {"room_id": "attic"}, "NOT_FOUND"),
    ("get_room_states", {"room": "room"}, "INVALID_COMMAND"),
    ("cancel_workflow", {"workflow_id": "wf-9"}, "NOT_FOUND"),
    ("fly", {}, "UNSUPPORTED_COMMAND"),
])
def test_bad_input_gets_a_matter_status_that_names_it_and_changes_nothing(home, tool, args, status):
    before = home.state()
    out = home.call(tool, args)
    assert out["status"] == status and out["error"]
    assert home.state() == before


def test_a_refused_argument_list_is_not_a_json_object(home):
    assert home.call("get_rooms", ["x"])["status"] == "INVALID_COMMAND"


@pytest.mark.parametrize("tool, args", [("get_room_states", {"room_id": ["x"]}), ("get_attribute", {"device_id": {},
                         "cluster": "OnOff", "attribute": "OnOff"}), ("cancel_workflow", {"workflow_id": [1]})])
def test_an_argument_of_the_wrong_type_is_refused_not_a_crash(home, tool, args):
    before = home.state()
    assert home.call(tool, args)["status"] == "INVALID_COMMAND" and home.state() == before


def test_the_checked_scheduler_refuses_malformed_actions_and_observations_are_copies():
    checked = sim.Home.from_config(home_config([light()]), validate_on_schedule=True)
    bad = [{"tool": "execute_command", "args": {"device_id": "l1", "cluster": "OnOff", "command": "On", "extra": 1}}]
    assert checked.call("schedule_workflow", {"start_time": "08:10:00", "actions": bad})["status"] == "INVALID_COMMAND"
    rules = checked.call("get_environment_control_rules")["rules"]
    rules.clear()
    structure = checked.call("get_device_structure", {"device_id": "l1"})
    structure["clusters"]["LevelControl"]["commands"]["MoveToLevel"]["level"][1] = 10**6
    assert checked.call("get_environment_control_rules")["rules"] and matter.COMMANDS["LevelControl"]["MoveToLevel"]["level"] == (1, 254)


def test_dependencies_in_order_succeed_and_are_logged(home):
    assert home.call("execute_command", {"device_id": "l1", "cluster": "OnOff", "command": "On"})["status"] == "SUCCESS"
    out = home.call("execute_command", {"device_id": "l1", "cluster": "LevelControl", "command": "MoveToLevel",
                                        "args": {"level": 200}})
    assert out["status"] == "SUCCESS"
    assert home.call("get_attribute", {"device_id": "l1", "cluster": "LevelControl", "attribute": "CurrentLevel"})["value"] == 200
    assert [c[1:] for c in home.changes[-2:]] == [("l1", "OnOff.OnOff", True), ("l1", "LevelControl.CurrentLevel", 200)]
    assert home.illuminance(home.rooms["room"]) == pytest.approx(200 + 500 * 200 / 254)


def test_one_ac_cools_as_the_closed_form_of_the_ode_and_two_add_up():
    env = {"temperature": 3000, "humidity": 5000, "illuminance": 100, "pm10": 50}
    k1, trace = selftest.fidelity(env, 30)
    assert k1["k1_drop_rel_err"] < 1e-4 and k1["k1_relax_rel_err"] < 1e-4 and k1["k1_monotone"] == 1.0
    assert k1["k1_two_over_one"] == pytest.approx(2.0, abs=1e-6)
    drop = environment.COOL_CAP / environment.T_RELAX * (1 - math.exp(-environment.T_RELAX * 1800)) / 100  # about 0.76 degC in 30 min
    assert k1["info_k1_drop_c"] == pytest.approx(drop, rel=1e-4) and 0.7 < drop < 0.9


@pytest.mark.parametrize("seed", [0, 1])
def test_the_batch_advance_equals_tick_by_tick_stepping_and_euler_does_not(seed):
    env = selftest.scenario_env(__import__("numpy").random.default_rng(seed))
    f = {"hours": 1, "workflows": 3, "repeats": 1}
    cfg = selftest.busy_config(env, 6)
    exact = selftest.acceleration(cfg, f, seed)
    assert exact["k2_max_abs_diff"] < 1e-6
    assert selftest.acceleration(cfg, f, seed, selftest.CoarseHome)["k2_max_abs_diff"] > 1e-3


def test_a_cap_crossing_is_stepped_exactly():
    """The AC's set-point is reached: the rate changes piece (capped -> linear) inside the advance."""
    cfg = home_config([selftest.ac("ac", 2990, 100)], temperature=3000)
    batch, ticks = sim.Home.from_config(cfg), sim.Home.from_config(cfg, exact_batch=False)
    for h in (batch, ticks):
        h.advance(1800)
    assert batch.rooms["room"].env["temperature"] == pytest.approx(ticks.rooms["room"].env["temperature"], abs=1e-6)
    assert batch.rooms["room"].env["temperature"] < 2991  # it went past the knee toward the set-point


def test_an_appliance_counts_down_and_stops_at_the_end_of_its_cycle():
    home = sim.Home.from_config(home_config([appliance(running_s=125)]))
    assert home.call("get_attribute", {"device_id": "dw", "cluster": "OperationalState",
                                       "attribute": "CountdownTime"})["value"] == 125
    home.advance(100)
    assert home.devices["dw"].attrs["OperationalState"]["CountdownTime"] == 25
    home.advance(30)
    assert home.devices["dw"].attrs["OperationalState"] == {"OperationalState": matter.STOPPED, "CountdownTime": None}
    end = [c for c in home.changes if c[2] == "OperationalState.OperationalState"]
    assert end == [(sim.parse_clock("08:00:00") + 1250, "dw", "OperationalState.OperationalState", matter.STOPPED)]


def test_a_workflow_returns_a_receipt_and_a_bad_action_fails_silently_unless_checked():
    bad = [{"tool": "execute_command", "args": {"device_id": "l1x", "cluster": "OnOff", "command": "On"}}]
    good = [{"tool": "execute_command", "args": {"device_id": "l1", "cluster": "OnOff", "command": "On"}}]
    home = sim.Home.from_config(home_config([light()]))
    assert home.call("schedule_workflow", {"start_time": "08:10:00", "actions": bad}) == {
        "status": "SUCCESS", "workflow_id": "wf-1", "state": "registered"}
    assert home.call("schedule_workflow", {"start_time": "08:20:00", "actions": good})["status"] == "SUCCESS"
    home.advance(900)
    assert home.devices["l1"].attrs["OnOff"]["OnOff"] is False  # 08:15: the bad one ran and did nothing
    home.advance(600)
    assert home.devices["l1"].attrs["OnOff"]["OnOff"] is True
    assert [c[0] for c in home.changes if c[1] == "l1"] == [sim.parse_clock("08:20:00")]
    checked = sim.Home.from_config(home_config([light()]), validate_on_schedule=True)
    assert checked.call("schedule_workflow", {"start_time": "08:10:00", "actions": bad})["status"] == "NOT_FOUND"
    assert checked.call("schedule_workflow", {"start_time": "08:10:00", "actions": good})["status"] == "SUCCESS"


def test_every_tool_has_a_function_calling_spec_the_home_answers():
    assert set(sim.TOOL_SPECS) == set(sim.TOOLS_BY_NAME) and len(sim.TOOL_SPECS) == 14
    for spec in sim.TOOL_SPECS.values():
        assert spec["parameters"]["type"] == "object" and spec["description"]


# ---- the benchmark -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def episodes():
    return E.generate(4, 0)


def test_episodes_cover_the_12_categories_validate_and_are_a_pure_function_of_the_seed(episodes):
    assert sorted({e["meta"]["category"] for e in episodes}) == sorted(E.CATEGORIES) and len(episodes) == 48
    assert E.generate(4, 0) == episodes and E.generate(4, 1) != episodes
    for ep in episodes:
        sim.Home.from_config(ep["initial_home_config"])  # builds


def test_a_malformed_episode_is_named_with_its_field(episodes):
    bad = copy.deepcopy(episodes[0])
    bad["eval"] = {"goals": [{"device": "x", "attribute": "OnOff.OnOff", "value": True, "at": "8 o'clock"}]}
    with pytest.raises(ValueError, match=r"s0-qt1_feasible-000: eval.goals.0.at"):
        E.validate([bad])


def timed_episode(at="08:10:00"):
    return {"meta": {"id": "t-qt4_1_feasible-000", "category": "qt4_1_feasible"}, "initial_home_config": home_config([light()]),
            "eval": {"goals": [{"device": "l1", "attribute": "OnOff.OnOff", "value": True, "at": at, "tolerance_ticks": 300}]}}


@pytest.mark.parametrize("when, success", [("08:09:35", True), ("08:10:29", True), ("08:09:20", False), ("08:10:40", False)])
def test_a_scheduled_goal_must_be_met_within_300_ticks(when, success):
    ep = timed_episode()
    home = sim.Home.from_config(ep["initial_home_config"])
    home.schedule_workflow(when, [{"tool": "execute_command", "args": {"device_id": "l1", "cluster": "OnOff", "command": "On"}}])
    assert E.judge(ep, home, "Scheduled.", sim.Home.from_config(ep["initial_home_config"])) is success


def test_the_clockless_judge_passes_acting_at_once():
    ep = timed_episode()
    initial = sim.Home.from_config(ep["initial_home_config"])
    home = sim.Home.from_config(ep["initial_home_config"])
    home.execute_command("l1", "OnOff", "On")
    assert not E.judge(ep, copy.deepcopy(home), "Done.", initial)
    assert E.judge(ep, home, "Done.", initial, any_time=True)


def test_an_infeasible_episode_needs_the_marker_and_the_one_right_reason(episodes):
    ep = next(e for e in episodes if e["meta"]["category"] == "qt4_2_infeasible")
    home = sim.Home.from_config(ep["initial_home_config"])
    assert E.judge(ep, home, "INFEASIBLE: not_running (the dishwasher is idle)", home)
    assert not E.judge(ep, home, "not_running", home) and not E.judge(ep, home, "INFEASIBLE: past_time", home)
    assert not E.judge(ep, home, "INFEASIBLE: " + " ".join(E.REASONS), home)  # naming every class is no answer


def test_the_user_is_where_the_request_is(episodes):
    for ep in episodes:
        rooms = ep["initial_home_config"]["rooms"]
        assert ep["user_location"] in rooms
    dryer = next(e for e in episodes if e["meta"]["category"] == "qt4_3_feasible")
    assert dryer["user_location"] == "utility_room"


def test_a_refused_finish_is_an_error_the_agent_sees(episodes):
    class Stubborn:
        def policy(self, ep, rng):
            obs = yield A.Call("bad finish", "finish", {"text": "done"})
            assert obs["status"] == "INVALID_COMMAND"
            yield A.Call("finish", "finish", {"answer": "INFEASIBLE: past_time"})

    ep = next(e for e in episodes if e["meta"]["category"] == "qt4_1_infeasible")
    row, steps = A.run_episode(ep, Stubborn())
    assert len(steps) == 2 and row["answer"] == "INFEASIBLE: past_time" and row["success"]


def test_the_agent_ladder_on_a_few_episodes(episodes):
    def rate(agent, prefix, **kw):
        rows = [A.run_episode(e, agent, **kw)[0] for e in episodes if e["meta"]["category"].startswith(prefix)]
        return sum(r["success"] for r in rows) / len(rows)

    assert rate(A.PlannerAgent(), "qt") == 1.0
    assert rate(A.RandomAgent(), "qt") <= 0.05
    assert rate(A.ReactiveAgent(), "qt4_1_feasible") == rate(A.ReactiveAgent(), "qt4_3_feasible") == 0.0
    assert rate(A.ReactiveAgent(), "qt3_feasible") == 1.0
    assert rate(A.VerifyingAgent(), "qt3_infeasible") == 1.0 > rate(A.ReactiveAgent(), "qt3_infeasible")


def test_a_slip_is_retried_after_an_error_and_marked_recovered(episodes):
    ep = next(e for e in episodes if e["meta"]["category"] == "qt3_feasible")
    row, steps = A.run_episode(ep, A.PlannerAgent(eps=1.0), max_steps=20)  # every argument slips, every time
    writes = [s for s in steps if s["action"] in ("execute_command", "write_attribute")]
    assert [s["retry"] for s in writes[:3]] == [False, True, True]  # one call and its two retries
    assert all(s["observation"]["status"] != "SUCCESS" for s in writes)
    assert not row["success"] and not row["recovered_error"]
    wins = [A.run_episode(e, A.PlannerAgent(eps=0.3), seed=s)[0] for e in episodes for s in range(3)
            if e["meta"]["category"] == "qt3_feasible"]
    assert any(r["success"] and r["recovered_error"] for r in wins)


def test_a_step_limit_ends_the_episode_without_success(episodes):
    ep = next(e for e in episodes if e["meta"]["category"] == "qt4_3_feasible")
    row, steps = A.run_episode(ep, A.PlannerAgent(), max_steps=2)
    assert len(steps) == 2 and not row["success"]


# ---- evaluate and plan -----------------------------------------------------------------------------------

def fake_runs(noisy_qt4: float, checked_qt4: float) -> pd.DataFrame:
    """Two seeds of hand-made rows: 10 episodes per (agent, category) with the given success rates."""
    rates = {"random": {}, "reactive": {"qt1_feasible": 1, "qt3_feasible": 1}, "verifying": {c: 1 for c in V.INFEASIBLE},
             "planner": {c: 1 for c in E.CATEGORIES},
             "planner_noisy": {c: (noisy_qt4 if c in V.QT4_FEASIBLE else 1) for c in E.CATEGORIES},
             "planner_noisy_checked": {c: (checked_qt4 if c in V.QT4_FEASIBLE else 1) for c in E.CATEGORIES}}
    rows = []
    for seed in (0, 1):
        for agent in plan.AGENTS:
            for c in E.CATEGORIES:
                for i in range(10):
                    ok = i < 10 * rates[agent].get(c, 0)
                    rows.append({"agent": agent, "seed": seed, "category": c, "success": ok, "success_any_time": True,
                                 "steps": 4, "recovered_error": ok and i % 2 == 0})
    return pd.DataFrame(rows)


def test_the_metrics_and_the_delayed_feedback_control_on_hand_made_runs():
    runs = fake_runs(noisy_qt4=0.6, checked_qt4=1.0)
    fid = [{"seed": s, "method": {"k2_wall_s": 0.1}, "coarse_euler": {"k2_wall_s": 0.2}} for s in (0, 1)]
    m = V.measure(runs, fid)
    assert m["k5_qt3_minus_qt4"] == pytest.approx([0.4, 0.4]) and m["k5_recovered_share"] == pytest.approx([0.5, 0.5])
    assert m["k3_planner_min_category"] == [1.0, 1.0] and m["k3_random_overall"] == [0.0, 0.0]
    assert m["k4_verifying_minus_reactive_infeasible"] == [1.0, 1.0] and m["k2_wall_s"] == [0.1, 0.1]
    controls = V.control_measures(runs, fid)
    assert controls["checked_scheduler"]["k5_qt3_minus_qt4"] == pytest.approx([0.0, 0.0])
    assert controls["vacuous_judge"]["k3_random_overall"] == [1.0, 1.0]
    assert controls["any_time_judge"]["k4_reactive_qt4_feasible_max"] == [1.0, 1.0]
    assert controls["coarse_euler"]["k2_wall_s"] == [0.2, 0.2]


def test_plan_check_rejects_a_cooling_run_longer_than_the_simulation():
    p = {"fidelity": {"cool_minutes": 200, "hours": 2}}
    with pytest.raises(ParamsError, match="cool_minutes"):
        plan.check(p)
    plan.check({"fidelity": {"cool_minutes": 30, "hours": 2}})
