"""tau2-bench's retail world: the DB, the agent's tools with tau2's semantics, the DB check."""

import json

import pytest

from palaestra.envs.tau2 import retail, store
from palaestra.envs.tau2 import tasks as tt
from palaestra.envs.tau2 import world as worlds
from palaestra.verifiers.tau2 import differences

PENDING = "#W6779827"  # ethan_lopez_6291, paid 4079.45 by gift_card_7219486 (balance 49.0)
DELIVERED = "#W9077205"  # amelia_wilson_4614, paid by gift_card_7108145; also paypal_4101143

#: gold actions that tau2's own tools answer with an error (its evaluator logs and goes on):
#: lookups of a wrong email, name/zip, product or order id the user first gives, task 64's
#: exchange tried on a pending order before the modification, task 105's exchange that a
#: gift card's balance cannot pay
GOLD_ERRORS = {
    "2",
    "3",
    "4",
    "35",
    "37",
    "38",
    "39",
    "46",
    "47",
    "54",
    "55",
    "64",
    "67",
    "68",
    "105",
}


@pytest.fixture
def world():
    conn = store.fresh()
    yield conn
    conn.close()


def ok(conn, name, **args):
    content, error = retail.call(conn, name, args)
    assert not error, content
    return json.loads(content) if content[:1] in "{[" else content


def other_variant(conn, product_id, item_id):
    variants = store.get(conn, "products", product_id)["variants"]
    return next(v for k, v in variants.items() if k != item_id and v["available"])


def balance(conn, user_id, method):
    return store.get(conn, "users", user_id)["payment_methods"][method]["balance"]


def test_the_db_loads_and_each_copy_is_private(world):
    assert {t: len(rows) for t, rows in store.dump(world).items()} == {
        "users": 500,
        "orders": 1000,
        "products": 50,
    }
    order = store.get(world, "orders", PENDING)
    assert order["status"] == "pending" and order["cancel_reason"] is None
    ok(world, "cancel_pending_order", order_id=PENDING, reason="no longer needed")
    assert store.get(store.fresh(), "orders", PENDING)["status"] == "pending"


def test_read_tools_answer_as_tau2(world):
    user = store.get(world, "users", "ethan_lopez_6291")
    assert ok(world, "find_user_id_by_email", email=user["email"].upper()) == "ethan_lopez_6291"
    name, zip_ = user["name"], user["address"]["zip"]
    found = ok(
        world,
        "find_user_id_by_name_zip",
        first_name=name["first_name"].lower(),
        last_name=name["last_name"],
        zip=zip_,
    )
    assert found == "ethan_lopez_6291"
    assert ok(world, "get_user_details", user_id="ethan_lopez_6291")["orders"]
    item = ok(world, "get_order_details", order_id=PENDING)["items"][0]
    assert ok(world, "get_item_details", item_id=item["item_id"])["price"] == item["price"]
    product = ok(world, "get_product_details", product_id=item["product_id"])
    assert item["item_id"] in product["variants"]
    types = ok(world, "list_all_product_types")
    assert len(types) == 50 and list(types) == sorted(types)
    assert ok(world, "calculate", expression="652.61 + 473.43") == "1126.04"
    assert ok(world, "transfer_to_human_agents", summary="wants a human") == "Transfer successful"


ADDRESS = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA"}
CARD, GIFT = "credit_card_9789590", "gift_card_7219486"  # the pending order's user's methods
KEYBOARD = "7896397433"  # an item of the pending order
BAD = [
    ("calculate", {"expression": "__import__('os')"}, "Invalid characters in expression"),
    ("calculate", {"expression": "9**9**9"}, "Numerical result out of range"),
    ("find_user_id_by_email", {"mail": "x@example.com"}, "unexpected keyword argument 'mail'"),
    (
        "find_user_id_by_name_zip",
        {"first_name": "Ethan", "last_name": "Lopez", "zip": "0"},
        "User not found",
    ),
    ("get_order_details", {"order_id": "W6779827"}, "Order not found"),
    ("get_order_details", {}, "missing 1 required positional argument: 'order_id'"),
    ("get_product_details", {"product_id": KEYBOARD}, "Product not found"),
    ("get_item_details", {"item_id": "7233192239"}, "Item not found"),
    ("get_user_details", {"user_id": "nobody_1"}, "User not found"),
    ("list_all_product_types", {"limit": 3}, "unexpected keyword argument 'limit'"),
    ("transfer_to_human_agents", {}, "missing 1 required positional argument: 'summary'"),
    ("cancel_pending_order", {"order_id": PENDING, "reason": "changed my mind"}, "Invalid reason"),
    (
        "cancel_pending_order",
        {"order_id": DELIVERED, "reason": "no longer needed"},
        "Non-pending order cannot be cancelled",
    ),
    (
        "modify_pending_order_address",
        {"order_id": DELIVERED, "zip": "90001", **ADDRESS},
        "Non-pending order cannot be modified",
    ),
    (
        "modify_pending_order_items",
        {
            "order_id": PENDING,
            "item_ids": [KEYBOARD],
            "new_item_ids": [KEYBOARD],
            "payment_method_id": CARD,
        },
        "The new item id should be different from the old item id",
    ),
    (
        "modify_pending_order_items",
        {
            "order_id": PENDING,
            "item_ids": [KEYBOARD] * 2,
            "new_item_ids": ["1", "2"],
            "payment_method_id": CARD,
        },
        f"{KEYBOARD} not found",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": GIFT},
        "The new payment method should be different from the current one",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "paypal_0"},
        "Payment method not found",
    ),
    ("modify_user_address", {"user_id": "nobody_1", "zip": "90001", **ADDRESS}, "User not found"),
    (
        "exchange_delivered_order_items",
        {
            "order_id": DELIVERED,
            "item_ids": ["9370300555"],
            "new_item_ids": [],
            "payment_method_id": CARD,
        },
        "The number of items to be exchanged should match.",
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED, "item_ids": ["9370300555"], "payment_method_id": "paypal_4101143"},
        "Payment method should be the original payment method",
    ),
    (
        "return_delivered_order_items",
        {"order_id": PENDING, "item_ids": [KEYBOARD], "payment_method_id": GIFT},
        "Non-delivered order cannot be returned",
    ),
    ("delete_order", {"order_id": PENDING}, "Tool 'delete_order' not found."),
]


@pytest.mark.parametrize(("name", "args", "error"), BAD)
def test_wrong_arguments_answer_tau2s_error_and_change_nothing(world, name, args, error):
    before = store.dump(world)
    content, is_error = retail.call(world, name, args)
    assert is_error and content.startswith("Error: ") and error in content
    assert store.dump(world) == before


def test_a_failing_write_rolls_back_what_it_wrote(world):
    before = store.dump(world)
    with pytest.raises(ValueError), store.transaction(world):
        store.put(world, "orders", PENDING, {"status": "cancelled"})
        raise ValueError("late failure")
    assert store.dump(world) == before


def test_cancel_refunds_a_gift_card_at_once(world):
    order = ok(world, "cancel_pending_order", order_id=PENDING, reason="ordered by mistake")
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 4079.45,
        "payment_method_id": "gift_card_7219486",
    }
    assert balance(world, "ethan_lopez_6291", "gift_card_7219486") == 4128.45


def test_modify_pending_order_address_items_and_payment(world):
    address = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA"}
    assert ok(world, "modify_pending_order_address", order_id=PENDING, zip="90001", **address)[
        "address"
    ] == address | {"zip": "90001"}
    new = other_variant(world, "7233192239", "7896397433")
    order = ok(
        world,
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=["7896397433"],
        new_item_ids=[new["item_id"]],
        payment_method_id="credit_card_9789590",
    )
    assert order["status"] == "pending (item modified)"
    assert (
        order["items"][0]["item_id"] == new["item_id"]
        and order["items"][0]["price"] == new["price"]
    )
    assert order["payment_history"][-1]["amount"] == abs(new["price"] - 457.81)
    # "pending (item modified)" still counts as pending for a payment change, but the payment
    # history now has two entries, so tau2 refuses
    content, error = retail.call(
        world,
        "modify_pending_order_payment",
        {"order_id": PENDING, "payment_method_id": "credit_card_9789590"},
    )
    assert error and "exactly one payment" in content


def test_modify_pending_order_payment_moves_the_money(world):
    order = ok(
        world,
        "modify_pending_order_payment",
        order_id=PENDING,
        payment_method_id="credit_card_9789590",
    )
    assert [p["transaction_type"] for p in order["payment_history"]] == [
        "payment",
        "payment",
        "refund",
    ]
    assert balance(world, "ethan_lopez_6291", "gift_card_7219486") == 4128.45


def test_modify_user_address(world):
    user = ok(
        world,
        "modify_user_address",
        user_id="ethan_lopez_6291",
        address1="1 A St",
        address2="Apt 2",
        city="X",
        state="CA",
        country="USA",
        zip="90001",
    )
    assert store.get(world, "users", "ethan_lopez_6291")["address"] == user["address"]


def test_exchange_and_return_of_a_delivered_order(world):
    new = other_variant(world, "1808611083", "9370300555")
    order = ok(
        world,
        "exchange_delivered_order_items",
        order_id=DELIVERED,
        item_ids=["9370300555"],
        new_item_ids=[new["item_id"]],
        payment_method_id="paypal_4101143",
    )
    assert order["status"] == "exchange requested"
    assert order["exchange_price_difference"] == round(new["price"] - 45.9, 2)
    content, error = retail.call(
        world,
        "return_delivered_order_items",
        {
            "order_id": DELIVERED,
            "item_ids": ["9370300555"],
            "payment_method_id": "gift_card_7108145",
        },
    )
    assert error and "Non-delivered order cannot be returned" in content
    fresh = store.fresh()
    order = ok(
        fresh,
        "return_delivered_order_items",
        order_id=DELIVERED,
        item_ids=["3877338112", "9370300555"],
        payment_method_id="gift_card_7108145",
    )
    assert order["status"] == "return requested" and order["return_items"] == [
        "3877338112",
        "9370300555",
    ]


def test_every_retail_tasks_gold_actions_replay_with_only_tau2s_own_errors():
    failing = set()
    for task in list(tt.tasks("retail").values()):
        if worlds.replay(worlds.RetailWorld(), tt.gold_actions(task)):
            failing.add(task["id"])
    assert failing == GOLD_ERRORS  # 99 of 114 replay without a single error


def test_the_db_check_passes_on_the_gold_world_and_names_a_mutation():
    checked = 0
    for task in list(tt.tasks("retail").values())[::10]:
        actions = tt.gold_actions(task)
        gold = worlds.gold_state("retail", task)
        world = worlds.RetailWorld()
        worlds.replay(world, actions)
        assert differences(worlds.snapshot(world), gold) == []
        writes = [a for a in actions if a["name"] in retail.WRITE]
        if task["id"] not in GOLD_ERRORS and writes:  # doing nothing differs
            assert differences(worlds.snapshot(worlds.RetailWorld()), gold)
        conn = world.conn
        pending = next(k for k, o in store.scan(conn, "orders") if o["status"] == "pending")
        ok(conn, "cancel_pending_order", order_id=pending, reason="no longer needed")
        assert f"orders.{pending}.status: " + '"cancelled" != "pending"' in differences(
            worlds.snapshot(world), gold
        )
        checked += 1
    assert checked == 12


def test_a_strict_replay_names_the_failing_gold_action():
    task = tt.get("retail", "105")
    with pytest.raises(worlds.ReplayError, match=r"gold action 0 .*Insufficient gift card balance"):
        worlds.replay(worlds.RetailWorld(), tt.gold_actions(task), strict=True)


def test_the_shared_initial_world_cannot_be_written():
    content, error = retail.call(
        store.initial(),
        "cancel_pending_order",
        {"order_id": "#W4776164", "reason": "ordered by mistake"},
    )
    assert error and "readonly" in content.lower().replace(" ", ""), content
    assert store.get(store.initial(), "orders", "#W4776164")["status"] != "cancelled"
