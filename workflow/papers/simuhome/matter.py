"""The Matter layer of minihome (the simulator in ``sim``): device types, their clusters and attributes, the writable
attributes' constraints and the commands' payloads, and the validation of a write or a command.

Devices are endpoints of Matter clusters taken from `chip.clusters.Objects` (the home-assistant-chip-clusters
wheel): cluster, attribute and command names, attribute types and enums, command payload dataclasses. Matter gives
types but not a device's constraints; those (ranges, which attributes are writable) are the tables below. Every
failed call answers a Matter interaction-model status (`CallError`: NOT_FOUND, UNSUPPORTED_ATTRIBUTE,
CONSTRAINT_ERROR, INVALID_IN_STATE, ...).
"""
from __future__ import annotations

import chip.clusters.Objects as Matter
import dacite
from chip.tlv import uint

# ---- Matter layer ----------------------------------------------------------------------------------------

DEVICE_TYPES = {  # device type -> its clusters (one endpoint each)
    "on_off_light": ("OnOff",),
    "dimmable_light": ("OnOff", "LevelControl"),
    "air_conditioner": ("OnOff", "Thermostat", "FanControl"),
    "heat_pump": ("OnOff", "Thermostat", "FanControl"),
    "fan": ("OnOff", "FanControl"),
    "humidifier": ("OnOff", "FanControl", "RelativeHumidityMeasurement"),
    "dehumidifier": ("OnOff", "FanControl", "RelativeHumidityMeasurement"),
    "air_purifier": ("OnOff", "FanControl", "Pm10ConcentrationMeasurement"),
    "window_covering": ("WindowCovering",),
    "dishwasher": ("OnOff", "OperationalState"),
    "laundry_washer": ("OnOff", "OperationalState"),
    "laundry_dryer": ("OnOff", "OperationalState"),
}
APPLIANCES = ("dishwasher", "laundry_washer", "laundry_dryer")

ATTRIBUTES = {  # cluster -> the attributes a device exposes, with their values on a new device (None: live)
    "OnOff": {"OnOff": False},
    "LevelControl": {"CurrentLevel": 254, "MinLevel": 1, "MaxLevel": 254},
    "Thermostat": {"LocalTemperature": None, "SystemMode": 0, "OccupiedCoolingSetpoint": 2400,
                   "OccupiedHeatingSetpoint": 2000},
    "FanControl": {"FanMode": 0, "PercentSetting": 0, "PercentCurrent": 0},
    "RelativeHumidityMeasurement": {"MeasuredValue": None},
    "Pm10ConcentrationMeasurement": {"MeasuredValue": None},
    "WindowCovering": {"CurrentPositionLiftPercent100ths": 0, "TargetPositionLiftPercent100ths": 0},
    "OperationalState": {"OperationalState": 0, "CountdownTime": None},
}
# The writable attributes and their constraints (Matter's cluster specification; Objects carries types only).
WRITABLE = {
    ("Thermostat", "SystemMode"): {"choices": (0, 3, 4, 7)},            # off, cool, heat, fan only
    ("Thermostat", "OccupiedCoolingSetpoint"): {"range": (1600, 3200)},  # 16-32 degC
    ("Thermostat", "OccupiedHeatingSetpoint"): {"range": (700, 3000)},   # 7-30 degC
    ("FanControl", "FanMode"): {"choices": (0, 1, 2, 3, 4, 5)},           # off, low, medium, high, on, auto
    ("FanControl", "PercentSetting"): {"range": (0, 100)},
}
HEAT_PUMP_MODES = (0, 4, 7)  # a heat pump cannot cool
FAN_MODE_PERCENT = {0: 0, 1: 33, 2: 66, 3: 100, 4: 100, 5: 50}  # FanMode -> PercentSetting (Matter's mapping)
COMMANDS = {  # cluster -> command -> {payload field: constraint}: the fields a call must give
    "OnOff": {"On": {}, "Off": {}, "Toggle": {}},
    "LevelControl": {"MoveToLevel": {"level": (1, 254)}},
    "OperationalState": {"Start": {}, "Stop": {}, "Pause": {}, "Resume": {}},
    "WindowCovering": {"UpOrOpen": {}, "DownOrClose": {}, "GoToLiftPercentage": {"liftPercent100thsValue": (0, 10000)}},
}
STOPPED, RUNNING, PAUSED = 0, 1, 2  # OperationalStateEnum.kStopped, kRunning, kPaused

for _cluster, _attrs in ATTRIBUTES.items():  # every name above is Matter's: a typo fails at import
    for _name in _attrs:
        getattr(getattr(Matter, _cluster).Attributes, _name)
for _cluster, _cmds in COMMANDS.items():
    for _name in _cmds:
        getattr(getattr(Matter, _cluster).Commands, _name)


class CallError(Exception):
    """A failed call: a Matter interaction-model status and a message that names the problem."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


def _uint(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an unsigned integer, got {value!r}")
    return uint(value)


def parse_command(cluster: str, command: str, payload: dict):
    """The Matter command object for a payload: unknown fields, wrong types and out-of-range values refused."""
    if command not in COMMANDS.get(cluster, {}):
        raise CallError("UNSUPPORTED_COMMAND", f"cluster {cluster} has no command {command!r} here; "
                        f"its commands: {sorted(COMMANDS.get(cluster, {}))}")
    if not isinstance(payload, dict):
        raise CallError("INVALID_COMMAND", f"{cluster}.{command}: args must be a JSON object, got {payload!r}")
    required = COMMANDS[cluster][command]
    missing = sorted(set(required) - set(payload))
    if missing:
        raise CallError("INVALID_COMMAND", f"{cluster}.{command} needs {missing}")
    try:
        parsed = dacite.from_dict(getattr(getattr(Matter, cluster).Commands, command), payload,
                                  config=dacite.Config(strict=True, type_hooks={uint: _uint}))
    except (dacite.DaciteError, TypeError, ValueError) as err:
        raise CallError("INVALID_COMMAND", f"{cluster}.{command}: {err}") from None
    for field, (lo, hi) in required.items():
        if not lo <= getattr(parsed, field) <= hi:
            raise CallError("CONSTRAINT_ERROR", f"{cluster}.{command}: {field} {getattr(parsed, field)} outside "
                            f"[{lo}, {hi}]")
    return parsed


def check_write(device_type: str, cluster: str, attribute: str, value) -> None:
    """Type (from Matter's attribute descriptor) and constraint of a write; raises CallError."""
    rule = WRITABLE.get((cluster, attribute))
    if rule is None:
        raise CallError("UNSUPPORTED_WRITE", f"{cluster}.{attribute} is read-only (use a command; writable: "
                        f"{sorted(f'{c}.{a}' for c, a in WRITABLE if c == cluster)})")
    if isinstance(value, bool) or not isinstance(value, int):
        raise CallError("INVALID_COMMAND", f"{cluster}.{attribute} takes an integer, got {value!r}")
    kind = getattr(getattr(Matter, cluster).Attributes, attribute).attribute_type.Type
    choices = rule.get("choices", ())
    if device_type == "heat_pump" and attribute == "SystemMode":
        choices = HEAT_PUMP_MODES
    if choices and value not in choices:
        names = {c: kind(c).name for c in choices} if hasattr(kind, "__members__") else choices
        raise CallError("CONSTRAINT_ERROR", f"{cluster}.{attribute} {value} not supported by a {device_type}; "
                        f"one of {names}")
    if "range" in rule and not rule["range"][0] <= value <= rule["range"][1]:
        raise CallError("CONSTRAINT_ERROR", f"{cluster}.{attribute} {value} outside {list(rule['range'])}")
