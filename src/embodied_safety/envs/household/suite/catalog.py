"""Object categories (BEHAVIOR-style synsets) and the abilities the household world reads.

Templates name categories only; abilities come from here, so an object behaves the same in
every task. Written by the project from common household knowledge.
"""

from __future__ import annotations

from ..taxonomy import category_profile

_F = ("fixed",)
CATALOG: dict[str, tuple[str, ...]] = {
    # furniture and surfaces
    "countertop.n.01": _F, "floor.n.01": _F, "table.n.02": _F, "shelf.n.01": _F, "lawn.n.01": _F,
    "workbench.n.01": _F, "bed.n.01": _F, "sofa.n.01": _F, "desk.n.01": _F, "ladder.n.01": (),
    "chopping_board.n.01": (), "tray.n.01": ("container",), "stool.n.01": (),
    "cabinet.n.01": ("openable", "container", "fixed"), "drawer.n.01": ("openable", "container", "fixed"),
    "wardrobe.n.01": ("openable", "container", "fixed"), "shed.n.01": ("openable", "container", "fixed"),
    "medicine_cabinet.n.01": ("openable", "container", "fixed"), "toolbox.n.01": ("openable", "container"),
    "trash_can.n.01": ("openable", "container"), "laundry_basket.n.01": ("container",),
    # appliances
    "stove.n.01": ("toggleable", "heatSource", "fixed"),
    "oven.n.01": ("openable", "toggleable", "heatSource", "container", "fixed"),
    "microwave.n.02": ("openable", "toggleable", "heatSource", "container", "fixed", "electric"),
    "electric_refrigerator.n.01": ("openable", "coldSource", "container", "fixed"),
    "freezer.n.01": ("openable", "coldSource", "container", "fixed"),
    "dishwasher.n.01": ("openable", "toggleable", "washer", "container", "fixed"),
    "washer.n.03": ("openable", "toggleable", "washer", "container", "fixed"),
    "clothes_dryer.n.01": ("openable", "toggleable", "heatSource", "container", "fixed"),
    "sink.n.01": ("toggleable", "waterSource", "fixed"),
    "bathtub.n.01": ("toggleable", "waterSource", "fillable", "container", "fixed"),
    "hose.n.03": ("toggleable", "waterSource"),
    "toaster.n.02": ("toggleable", "heatSource", "electric"),
    "electric_kettle.n.01": ("toggleable", "heatSource", "fillable", "electric"),
    "coffee_maker.n.01": ("toggleable", "heatSource", "fillable", "electric"),
    "iron.n.04": ("toggleable", "heatSource", "electric"),
    "hair_dryer.n.01": ("toggleable", "electric"),
    "curling_iron.n.01": ("toggleable", "heatSource", "electric"),
    "electric_fan.n.01": ("toggleable", "electric"),
    "table_lamp.n.01": ("toggleable", "electric"),
    "space_heater.n.01": ("toggleable", "heatSource", "electric"),
    "television_receiver.n.01": ("toggleable", "electric", "fixed"),
    "blender.n.01": ("toggleable", "electric", "container"),
    "grill.n.02": ("openable", "toggleable", "heatSource", "fixed"),
    "lawn_mower.n.01": ("toggleable",),
    "candle.n.01": ("toggleable", "heatSource", "flammable"),
    "fireplace.n.01": ("toggleable", "heatSource", "fixed"),
    "power_strip.n.01": ("electric",),
    # vessels
    "saucepot.n.01": ("fillable", "container"), "frying_pan.n.01": ("container",), "kettle.n.01": ("fillable",),
    "bowl.n.01": ("container", "fillable"), "plate.n.04": ("container",), "mug.n.04": ("fillable",),
    "bucket.n.01": ("fillable", "container"), "watering_can.n.01": ("fillable",), "baking_sheet.n.01": ("container",),
    "beer_glass.n.01": ("fillable",), "wineglass.n.01": ("fillable",), "vase.n.01": ("fillable", "container"),
    "tupperware.n.01": ("container", "openable"),
    # food
    "chicken.n.01": ("cookable", "freezable"), "steak.n.01": ("cookable", "freezable"),
    "salmon.n.03": ("cookable", "freezable"), "sausage.n.01": ("cookable", "freezable"),
    "pork.n.01": ("cookable", "freezable"), "shrimp.n.03": ("cookable", "freezable"),
    "egg.n.02": ("cookable",), "potato.n.01": ("cookable", "sliceable"), "carrot.n.03": ("cookable", "sliceable"),
    "broccoli.n.02": ("cookable",), "pasta.n.02": ("cookable",), "rice.n.01": ("cookable",),
    "soup.n.01": ("cookable", "freezable"), "pizza.n.01": ("cookable", "freezable"), "bread.n.01": ("cookable", "sliceable"),
    "bagel.n.01": ("cookable",), "muffin.n.01": ("cookable",), "cookie.n.01": ("cookable",),
    "apple.n.01": ("sliceable",), "pear.n.01": ("sliceable",), "lemon.n.01": ("sliceable",),
    "tomato.n.01": ("sliceable",), "cucumber.n.02": ("sliceable",), "onion.n.03": ("sliceable", "cookable"),
    "melon.n.01": ("sliceable",), "mango.n.02": ("sliceable",), "eggplant.n.01": ("sliceable", "cookable"),
    "peach.n.03": ("sliceable",), "cheese.n.01": ("sliceable", "freezable"), "milk.n.01": ("freezable",),
    "ice_cream.n.01": ("freezable",), "yogurt.n.01": ("freezable",), "butter.n.01": ("freezable",),
    "berry.n.01": ("freezable",), "pie.n.01": ("cookable", "freezable"), "tofu.n.01": ("cookable", "freezable"),
    "zucchini.n.01": ("sliceable", "cookable"), "pineapple.n.01": ("sliceable",), "ham.n.01": ("cookable", "freezable"),
    "dumpling.n.01": ("cookable", "freezable"), "croissant.n.01": ("cookable",), "waffle.n.01": ("cookable", "freezable"),
    # tools and textiles
    "carving_knife.n.01": ("slicer",), "paring_knife.n.01": ("slicer",), "scissors.n.01": ("slicer",),
    "pruning_shears.n.01": ("slicer",), "saw.n.02": ("slicer",),
    "paper_towel.n.01": ("cleaningTool", "soakable", "flammable"), "rag.n.01": ("cleaningTool", "soakable", "flammable"),
    "dishtowel.n.01": ("cleaningTool", "soakable", "flammable"), "sponge.n.01": ("cleaningTool", "soakable"),
    "scrub_brush.n.01": ("cleaningTool", "soakable"), "duster.n.01": ("cleaningTool",), "mop.n.01": ("cleaningTool", "soakable"),
    "towel.n.01": ("cleaningTool", "soakable", "flammable"), "newspaper.n.01": ("flammable",),
    "cookbook.n.01": ("flammable",), "curtain.n.01": ("flammable", "fixed"), "oven_mitt.n.01": ("flammable",),
    "shirt.n.01": ("flammable",), "sweater.n.01": ("flammable",), "jeans.n.01": ("flammable",), "sheet.n.03": ("flammable",),
    "pillow.n.01": ("flammable",), "blanket.n.01": ("flammable",),
    "plant.n.02": ("fillable",), "pot.n.04": ("container",), "fork.n.01": (), "spoon.n.01": (), "aluminum_foil.n.01": (),
    "hammer.n.02": (), "screwdriver.n.01": (), "drill.n.01": ("toggleable", "electric"), "book.n.01": ("flammable",),
    "toothbrush.n.01": (), "razor.n.01": (), "phone.n.01": ("electric",), "laptop.n.01": ("electric",),
    "hand_towel.n.01": ("cleaningTool", "soakable", "flammable"), "toy.n.03": (), "box.n.01": ("container",),
    "detergent_bottle.n.01": ("container",), "bleach_bottle.n.01": ("container",), "fertilizer_bag.n.01": ("container",),
    "pesticide_bottle.n.01": ("container",), "ammonia_bottle.n.01": ("container",), "medicine_bottle.n.01": ("container",),
    "salt_shaker.n.01": ("container",), "sauce_bottle.n.01": ("container",), "oil_bottle.n.01": ("container",),
    "cutting_board.n.01": (), "agent.n.01": ("fixed",),
    # substances (particle systems)
    "water.n.06": ("substance",), "dust.n.01": ("substance",), "stain.n.01": ("substance",), "mud.n.03": ("substance",),
    "grease.n.01": ("substance",), "crumb.n.03": ("substance",), "detergent.n.02": ("substance",),
    "bleaching_agent.n.01": ("substance",), "fertilizer.n.01": ("substance",), "pesticide.n.01": ("substance",),
    "ammonia.n.01": ("substance",), "salt.n.02": ("substance",), "sauce.n.01": ("substance",),
    "cooking_oil.n.01": ("substance",), "medicine.n.02": ("substance",), "mold.n.05": ("substance",),
    # ---- added for the living room, utility room, garden, bathroom and extra kitchen templates
    # kitchen
    "griddle.n.01": ("toggleable", "heatSource"), "hot_plate.n.01": ("toggleable", "heatSource", "electric"),
    "waffle_iron.n.01": ("toggleable", "heatSource", "electric"),
    "sandwich_press.n.01": ("toggleable", "heatSource", "electric"),
    "lasagna.n.01": ("cookable", "freezable"), "quiche.n.01": ("cookable",), "pita.n.01": ("cookable",),
    "crumpet.n.01": ("cookable",), "stew.n.02": ("cookable", "freezable"), "curry.n.01": ("cookable", "freezable"),
    "colander.n.01": ("container",), "wok.n.01": ("container",), "dish_rack.n.01": ("container",),
    "lunch_box.n.01": ("openable", "container"), "jar.n.01": ("openable", "container"),
    "teacup.n.02": ("fillable",), "saucer.n.02": ("container",), "steak_knife.n.01": ("slicer",),
    "platter.n.01": ("container",), "napkin.n.01": ("flammable",), "paper_plate.n.01": ("flammable",),
    "disinfectant_bottle.n.01": ("container",), "glass_cleaner_bottle.n.01": ("container",),
    "oven_cleaner_bottle.n.01": ("container",), "degreaser_bottle.n.01": ("container",),
    # living room
    "pillar_candle.n.01": ("toggleable", "heatSource", "flammable"),
    "tealight.n.01": ("toggleable", "heatSource", "flammable"),
    "incense_stick.n.01": ("toggleable", "heatSource", "flammable"), "oil_lamp.n.01": ("toggleable", "heatSource"),
    "lighter.n.02": (), "marshmallow.n.01": ("cookable",), "chestnut.n.03": ("cookable",),
    "hot_dog.n.01": ("cookable", "freezable"),
    "computer_monitor.n.01": ("toggleable", "electric"), "radio_receiver.n.01": ("toggleable", "electric"),
    "game_console.n.01": ("toggleable", "electric"), "floor_lamp.n.01": ("toggleable", "electric"),
    "ceiling_lamp.n.01": ("toggleable", "electric", "fixed"), "desk_lamp.n.01": ("toggleable", "electric"),
    "chandelier.n.01": ("toggleable", "electric", "fixed"), "light_bulb.n.01": (), "led_bulb.n.01": (),
    "fern.n.02": ("fillable",), "orchid.n.01": ("fillable",), "bonsai.n.01": ("fillable",), "succulent.n.01": ("fillable",),
    "picture_frame.n.01": (), "figurine.n.01": (), "clock.n.01": (), "snow_globe.n.01": (), "trophy.n.01": (),
    "ball.n.01": (), "teddy_bear.n.01": (),
    # utility room
    "sock.n.01": ("flammable",), "dress.n.01": ("flammable",),
    "pail.n.01": ("fillable", "container"), "basin.n.01": ("fillable", "container"),
    "washtub.n.01": ("fillable", "container"), "mop_bucket.n.01": ("fillable", "container"),
    "plank.n.01": ("sliceable",), "dowel.n.01": ("sliceable",), "pvc_pipe.n.01": ("sliceable",),
    "broomstick.n.01": ("sliceable",), "curtain_rod.n.01": ("sliceable",), "hacksaw.n.01": ("slicer",),
    "dehumidifier.n.01": ("toggleable", "electric", "fillable"), "humidifier.n.01": ("toggleable", "electric", "fillable"),
    "air_conditioner.n.01": ("toggleable", "electric", "fillable"),
    "water_dispenser.n.01": ("toggleable", "electric", "fillable"),
    # garden
    "rosebush.n.01": ("fillable",), "tomato_plant.n.01": ("fillable",), "hedge.n.01": ("fillable",), "apple_tree.n.01": ("fillable",), "sunflower.n.01": ("fillable",),
    "extension_cord.n.01": ("electric",), "hedge_trimmer.n.01": ("toggleable", "electric"),
    "fungicide_bottle.n.01": ("container",), "weedkiller_bottle.n.01": ("container",),
    "insecticide_bottle.n.01": ("container",), "moss_killer_bottle.n.01": ("container",),
    "strawberry.n.01": (), "lettuce.n.03": (), "burger.n.01": ("cookable", "freezable"),
    "kebab.n.01": ("cookable", "freezable"), "branch.n.02": (), "stick.n.01": (), "pine_cone.n.01": (),
    "pebble.n.01": (), "acorn.n.01": (), "rake.n.03": (), "shovel.n.01": (), "hoe.n.01": (),
    "compost_bin.n.01": ("container",), "gutter.n.01": ("fixed",),
    "trowel.n.01": ("cleaningTool",), "gardening_glove.n.01": ("cleaningTool",),
    "gutter_scoop.n.01": ("cleaningTool",), "hand_rake.n.01": ("cleaningTool",),
    # bathroom
    "electric_razor.n.01": ("toggleable", "electric"), "hair_straightener.n.01": ("toggleable", "heatSource", "electric"),
    "bubble_bath_bottle.n.01": ("container",), "bath_oil_bottle.n.01": ("container",),
    "cough_syrup_bottle.n.01": ("container",), "antacid_bottle.n.01": ("container",),
    "vitamin_bottle.n.01": ("container",), "eye_drops_bottle.n.01": ("container",), "medicine_cup.n.01": ("fillable",),
    "mirror.n.01": ("fixed",), "toilet.n.02": ("fixed",), "shower_stall.n.01": ("fixed",), "bidet.n.01": ("fixed",),
    "towel_rack.n.01": ("fixed",), "window.n.01": ("openable", "fixed"),
    "shampoo_bottle.n.01": ("container",), "slipper.n.01": (), "bar_soap.n.01": (),
    "gauze.n.02": ("sliceable",), "bandage.n.01": ("sliceable",), "medical_tape.n.01": ("sliceable",),
    "cotton_roll.n.01": ("sliceable",), "sticking_plaster.n.01": ("sliceable",), "nail_scissors.n.01": ("slicer",),
    # substances
    "disinfectant.n.01": ("substance",), "glass_cleaner.n.01": ("substance",), "oven_cleaner.n.01": ("substance",),
    "degreaser.n.01": ("substance",), "vinegar.n.01": ("substance",), "soot.n.01": ("substance",),
    "paint.n.01": ("substance",), "fungicide.n.01": ("substance",), "herbicide.n.01": ("substance",),
    "insecticide.n.01": ("substance",), "moss_killer.n.01": ("substance",), "raw_juice.n.01": ("substance",),
    "leaf_litter.n.01": ("substance",), "moss.n.01": ("substance",), "bubble_bath.n.01": ("substance",),
    "bath_oil.n.01": ("substance",),
    # ---- BEHAVIOR synsets that carry the abilities the templates need in the taxonomy (issue 17)
    "heater.n.01": ("toggleable", "heatSource", "electric"), "radiator.n.02": ("toggleable", "heatSource", "electric"),
    "toaster_oven.n.01": ("openable", "toggleable", "heatSource", "electric"),
    "hand_blower.n.01": ("toggleable", "heatSource", "electric"),
    "rope.n.01": ("sliceable",), "wrapping_paper.n.01": ("sliceable", "flammable"), "handsaw.n.01": ("slicer",),
    "pumpkin.n.02": ("sliceable",), "entire_leaf.n.01": ("sliceable",),
    "porkchop.n.01": ("cookable", "freezable"), "hamburger.n.01": ("cookable", "freezable"),
    "bacon.n.01": ("cookable", "freezable"), "burrito.n.01": ("cookable", "freezable"),
    "chicken_wing.n.01": ("cookable", "freezable"), "apple_pie.n.01": ("cookable", "freezable"),
    "broom.n.01": ("cleaningTool",), "steel_wool.n.01": ("cleaningTool",),
    "cooked__water.n.01": ("substance",), "cooked__cooking_oil.n.01": ("substance",),
}


#: the abilities an IS-Bench task file declares (``planning_context.object_abilities`` is prompt text)
DECLARED = ("openable", "fillable", "toggleable")
#: abilities the world's primitives test; the rest of the catalog (fixed, electric, flammable,
#: container) is the generator's own knowledge of a category and never reaches a file
WORLD_TESTED = frozenset({"openable", "toggleable", "fillable", "heatSource", "coldSource", "waterSource", "washer",
                          "cookable", "freezable", "sliceable", "slicer", "cleaningTool", "soakable"})


def declared_abilities(category: str) -> tuple[str, ...]:
    """What a generated file declares for an object: only ``openable`` / ``fillable`` / ``toggleable``."""
    return tuple(a for a in abilities_of(category) if a in DECLARED)


def missing_in_world(category: str) -> frozenset[str]:
    """Abilities the catalog expects that the world would not give this category (taxonomy + declared)."""
    if "__" in category:
        return frozenset()
    have = category_profile(category).abilities | set(declared_abilities(category))
    return frozenset(a for a in abilities_of(category) if a in WORLD_TESTED) - have


def abilities_of(category: str) -> tuple[str, ...]:
    """Abilities of a catalog category; product categories (``half__apple.n.01``) have none."""
    if "__" in category:
        return ()
    try:
        return CATALOG[category]
    except KeyError as exc:
        raise KeyError(f"category {category!r} is not in the household catalog") from exc
