"""Believable, deterministic demo data for an empty inventory: three warehouses, sixty items, stock and history.

The content depends only on the reference time given (movements spread over the 90 days before it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from actions.domain import Actor, Item, Warehouse

__all__ = ["DEMO_SEED", "DemoData", "SeedMovement", "SeedStock", "demo_data"]

DEMO_SEED = 20_240_611
_HISTORY_DAYS = 90

WAREHOUSES = (
    Warehouse("BER", "Berlin Central", "Berlin", is_default=True),
    Warehouse("HAM", "Hamburg Port", "Hamburg", is_default=False),
    Warehouse("MUC", "Munich South", "Munich", is_default=False),
)

# category -> (supplier email, items as (sku, name, unit, unit cost in cents, reorder point))
_CATALOG: dict[str, tuple[str, tuple[tuple[str, str, str, int, int], ...]]] = {
    "Fasteners": ("orders@schraubwerk.example", (
        ("FST-1001", "Hex bolt M8×40, zinc plated, box of 100", "box", 1290, 20),
        ("FST-1002", "Hex nut M8, zinc plated, box of 200", "box", 890, 25),
        ("FST-1003", "Washer M8 DIN 125, box of 500", "box", 760, 15),
        ("FST-1004", "Wood screw 4×40 Torx, box of 200", "box", 1150, 30),
        ("FST-1005", "Drywall screw 3.5×35, box of 1000", "box", 1890, 20),
        ("FST-1006", "Wall plug 8 mm nylon, box of 100", "box", 540, 25),
        ("FST-1007", "Threaded rod M10×1000", "pcs", 349, 40),
        ("FST-1008", "Cable tie 300×4.8 black, pack of 100", "pack", 620, 30),
    )),
    "Hand tools": ("sales@handwerkzeug.example", (
        ("TLS-2001", "Claw hammer 500 g, fibreglass handle", "pcs", 1890, 8),
        ("TLS-2002", "Screwdriver set, 8-piece", "set", 2490, 6),
        ("TLS-2003", "Combination pliers 180 mm", "pcs", 1450, 8),
        ("TLS-2004", "Adjustable wrench 250 mm", "pcs", 1790, 6),
        ("TLS-2005", "Tape measure 5 m", "pcs", 890, 12),
        ("TLS-2006", "Spirit level 60 cm", "pcs", 2290, 5),
        ("TLS-2007", "Utility knife with 10 blades", "pcs", 690, 15),
        ("TLS-2008", "Hex key set metric, 9-piece", "set", 1190, 8),
    )),
    "Power tools": ("b2b@voltwerk.example", (
        ("PWR-3001", "Cordless drill 18 V with 2 batteries", "pcs", 14900, 3),
        ("PWR-3002", "Angle grinder 125 mm, 1200 W", "pcs", 8900, 3),
        ("PWR-3003", "Jigsaw 650 W", "pcs", 9900, 2),
        ("PWR-3004", "Battery pack 18 V 5.0 Ah", "pcs", 7900, 5),
        ("PWR-3005", "HSS drill bit set, 19-piece", "set", 2990, 6),
        ("PWR-3006", "Cutting disc 125 mm for steel, pack of 10", "pack", 1290, 10),
        ("PWR-3007", "Random orbital sander 125 mm", "pcs", 11900, 2),
    )),
    "Electrical": ("orders@kabelhaus.example", (
        ("ELE-4001", "Installation cable NYM-J 3×1.5 mm², 50 m", "roll", 4490, 6),
        ("ELE-4002", "Extension lead 10 m, 3 sockets", "pcs", 1990, 8),
        ("ELE-4003", "LED bulb E27 9 W warm white", "pcs", 390, 40),
        ("ELE-4004", "Junction box surface-mounted IP54", "pcs", 260, 30),
        ("ELE-4005", "Lever connector 3-way, pack of 50", "pack", 1690, 10),
        ("ELE-4006", "Insulation tape 19 mm × 20 m", "roll", 149, 50),
        ("ELE-4007", "Two-pole voltage tester", "pcs", 3490, 4),
        ("ELE-4008", "LED work light 30 W", "pcs", 4290, 4),
    )),
    "Safety": ("service@sicherarbeit.example", (
        ("SAF-5001", "Safety glasses, clear", "pcs", 490, 30),
        ("SAF-5002", "Work gloves nitrile coated, size 9", "pair", 290, 60),
        ("SAF-5003", "Work gloves nitrile coated, size 10", "pair", 290, 60),
        ("SAF-5004", "Ear defenders SNR 30 dB", "pcs", 1590, 10),
        ("SAF-5005", "FFP2 respirator mask, box of 20", "box", 1290, 15),
        ("SAF-5006", "Hi-vis vest EN ISO 20471, yellow", "pcs", 390, 25),
        ("SAF-5007", "Safety helmet, white", "pcs", 990, 12),
        ("SAF-5008", "First aid kit DIN 13157", "pcs", 3290, 4),
    )),
    "Packaging": ("einkauf@packgut.example", (
        ("PKG-6001", "Cardboard box 400×300×200, single wall", "pcs", 89, 200),
        ("PKG-6002", "Cardboard box 600×400×400, double wall", "pcs", 219, 100),
        ("PKG-6003", "Packing tape 50 mm × 66 m, brown", "roll", 169, 60),
        ("PKG-6004", "Stretch film 500 mm × 300 m", "roll", 1190, 20),
        ("PKG-6005", "Bubble wrap 1 m × 50 m", "roll", 2490, 8),
        ("PKG-6006", "Pallet wrap dispenser", "pcs", 2990, 2),
        ("PKG-6007", "Euro pallet 1200×800", "pcs", 1490, 20),
    )),
    "Plumbing": ("vertrieb@rohrwelt.example", (
        ("PLB-7001", "PTFE thread seal tape 12 mm × 12 m", "roll", 99, 50),
        ("PLB-7002", "Copper pipe 15 mm × 2 m", "pcs", 1890, 10),
        ("PLB-7003", "Press fitting elbow 15 mm", "pcs", 310, 40),
        ("PLB-7004", "Ball valve 1/2 inch, brass", "pcs", 890, 15),
        ("PLB-7005", "Sanitary silicone sealant, white, 310 ml", "pcs", 690, 24),
        ("PLB-7006", "Pipe wrench 14 inch", "pcs", 2690, 4),
        ("PLB-7007", "Flexible hose 3/8 inch × 500 mm", "pcs", 590, 20),
    )),
    "Cleaning": ("order@reinweiss.example", (
        ("CLN-8001", "Paper towel rolls, 2-ply, pack of 6", "pack", 990, 20),
        ("CLN-8002", "All-purpose cleaner 1 l", "bottle", 349, 24),
        ("CLN-8003", "Hand cleaning paste 500 ml", "pcs", 590, 20),
        ("CLN-8004", "Microfibre cloths, pack of 10", "pack", 790, 15),
        ("CLN-8005", "Heavy-duty bin bags 120 l, roll of 25", "roll", 490, 30),
        ("CLN-8006", "Absorbent granules 20 kg", "bag", 1890, 6),
        ("CLN-8007", "Floor broom 40 cm", "pcs", 1290, 5),
    )),
}  # fmt: skip

_NOTES = (
    "",
    "",
    "",
    "Price rise announced for next quarter; compare alternatives before reordering.",
    "Supplier delivers on Tuesdays only.",
    "Keep dry: the packaging swells in the damp corner of aisle 4.",
    "Often mis-picked with the neighbouring bin; double-check the size.",
    "Negotiated 3% rebate above 500 units a year.",
    "Quality complaints in spring; inspect on receipt.",
    "Lead time currently three weeks.",
)
_PICK_REASONS = ("Customer order SO-{n}", "Customer order SO-{n}", "Picked for workshop job W-{n}", "Internal use")
_NEGATIVE_CORRECTIONS = ("Cycle count correction", "Damaged in handling", "Written off: expired")


@dataclass(frozen=True, slots=True)
class SeedStock:
    warehouse: str
    sku: str
    on_hand: int
    reserved: int


@dataclass(frozen=True, slots=True)
class SeedMovement:
    at: datetime
    warehouse: str
    sku: str
    delta: int
    reason: str
    actor: Actor
    on_hand_after: int


@dataclass(frozen=True, slots=True)
class DemoData:
    warehouses: tuple[Warehouse, ...]
    items: tuple[Item, ...]
    stock: tuple[SeedStock, ...]
    movements: tuple[SeedMovement, ...]  # oldest first


def _items(rng: random.Random) -> tuple[Item, ...]:
    items: list[Item] = []
    for category, (email, rows) in _CATALOG.items():
        for sku, name, unit, cost, reorder in rows:
            supplier_cost = round(cost * rng.uniform(0.55, 0.8))
            items.append(Item(sku, name, category, unit, cost, reorder, email, supplier_cost, rng.choice(_NOTES)))
    return tuple(items)


def _stock(rng: random.Random, warehouse: str, items: tuple[Item, ...]) -> list[SeedStock]:
    carried = items if warehouse == "BER" else [item for item in items if rng.random() > 0.15]
    low = {item.sku for item in rng.sample(list(carried), k=max(4, len(carried) // 8))}
    rows: list[SeedStock] = []
    for item in carried:
        reorder = item.reorder_point
        reserved = rng.randint(1, max(1, reorder // 2)) if rng.random() < 0.3 else 0
        available = rng.randint(0, reorder - 1) if item.sku in low else rng.randint(reorder, reorder * 4 + 5)
        rows.append(SeedStock(warehouse, item.sku, available + reserved, reserved))
    return rows


def _history(rng: random.Random, row: SeedStock, reorder: int, now: datetime) -> list[SeedMovement]:
    """Movements that end exactly at the row's on-hand figure, found by walking back in time from it."""
    days = sorted((rng.randint(1, _HISTORY_DAYS - 1) for _ in range(rng.randint(3, 9))), reverse=True)
    balance = row.on_hand
    newest_first: list[SeedMovement] = []
    for day in reversed(days):
        at = (now - timedelta(days=day)).replace(hour=rng.randint(6, 17), minute=rng.randint(0, 59))
        roll = rng.random()
        receipt = max(1, reorder * rng.randint(1, 3))
        if roll < 0.35 and receipt <= balance:
            delta, reason = receipt, f"Goods receipt PO-{rng.randint(24000, 26999)}"
        elif roll < 0.9:
            delta = -rng.randint(1, max(1, reorder // 2 + 2))
            reason = rng.choice(_PICK_REASONS).format(n=rng.randint(10000, 99999))
        else:
            delta, reason = -rng.randint(1, 3), rng.choice(_NEGATIVE_CORRECTIONS)
        actor: Actor = "agent" if rng.random() < 0.15 else "person"
        newest_first.append(SeedMovement(at, row.warehouse, row.sku, delta, reason, actor, balance))
        balance -= delta
    if balance > 0:
        opening = now - timedelta(days=_HISTORY_DAYS)
        newest_first.append(
            SeedMovement(opening, row.warehouse, row.sku, balance, "Opening balance", "person", balance)
        )
    return newest_first[::-1]


def demo_data(now: datetime, seed: int = DEMO_SEED) -> DemoData:
    """The demo inventory as of `now` (an aware datetime); the same `now` and `seed` always give the same data."""
    rng = random.Random(seed)
    base = now.replace(second=0, microsecond=0)
    items = _items(rng)
    reorder = {item.sku: item.reorder_point for item in items}
    stock = [row for warehouse in WAREHOUSES for row in _stock(rng, warehouse.code, items)]
    movements = [movement for row in stock for movement in _history(rng, row, reorder[row.sku], base)]
    movements.sort(key=lambda movement: movement.at)
    return DemoData(WAREHOUSES, items, tuple(stock), tuple(movements))
