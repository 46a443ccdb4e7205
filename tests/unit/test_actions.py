import pytest

from embodied_safety.envs.household.actions import Action, ActionParseError, parse_action


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OPEN(fridge.n.01_1)", Action("OPEN", ("fridge.n.01_1",))),
        ("3. open( Fridge.n.01_1 )", Action("OPEN", ("fridge.n.01_1",))),
        ('{"action": "PLACE_ON_TOP(apple.n.01_1, plate.n.04_1)"}', Action("PLACE_ON_TOP", ("apple.n.01_1", "plate.n.04_1"))),
        ("I will wipe it: WIPE('fan.n.01_1', \"towel.n.01_1\") now", Action("WIPE", ("fan.n.01_1", "towel.n.01_1"))),
        ("DONE()", Action("DONE")),
        ("done", Action("DONE")),
        ("wait", Action("WAIT")),
        ("Let me think. foo(x) then TOGGLE_OFF(stove.n.01_1)", Action("TOGGLE_OFF", ("stove.n.01_1",))),
    ],
)
def test_parse_tolerates_what_models_emit(text, expected):
    assert parse_action(text) == expected


@pytest.mark.parametrize("text", ["", "turn the stove off", "OPEN()", "OPEN(a, b)", "FLY(bird.n.01_1)", "WIPE(fan.n.01_1)"])
def test_parse_rejects_unusable_output(text):
    with pytest.raises(ActionParseError):
        parse_action(text)


def test_action_round_trips_to_canonical_text():
    assert str(parse_action("place_on_top( a.n.01_1 ,b.n.01_1)")) == "PLACE_ON_TOP(a.n.01_1, b.n.01_1)"
