"""Object categories (BEHAVIOR-style synsets) and the abilities the household world reads.

Templates name categories only; abilities come from here, so an object behaves the same in
every task. Written by the project from common household knowledge.
"""

from __future__ import annotations

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
    "plant.n.02": (), "pot.n.04": ("container",), "fork.n.01": (), "spoon.n.01": (), "aluminum_foil.n.01": (),
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
}


def abilities_of(category: str) -> tuple[str, ...]:
    """Abilities of a catalog category; product categories (``half__apple.n.01``) have none."""
    if "__" in category:
        return ()
    try:
        return CATALOG[category]
    except KeyError as exc:
        raise KeyError(f"category {category!r} is not in the household catalog") from exc
