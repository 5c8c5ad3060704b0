"""A food-delivery platform: its own user accounts and balances, six merchants with two-item menus."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.agent.apis.base import BaseApi, fail, is_false


class FoodPlatform(BaseApi):
    # State set from the default state and the config (AppObject); annotated only, so a missing one still raises.
    users: dict[str, dict[str, Any]]
    merchant_list: dict[str, dict[str, Any]]
    logged_in_users: list[Any]
    orders: list[dict[str, Any]]

    def _load_scenario(self, config: dict[str, Any]) -> None:
        """Besides the flags, the logged-in users come from the config: none unless it lists some."""
        super()._load_scenario(config)
        self.logged_in_users = config.get("logged_in_users", [])

    def login_food_platform(self, username: str, password: str) -> dict[str, Any]:
        # Only this object's Wi-Fi flag is checked; the device login is not.
        if is_false(self.wifi):
            return fail(self._text("food_wifi_off"))
        if username not in self.users:
            return fail(self._text("food_no_user"))
        if self.users[username]["password"] != password:
            return fail(self._text("wrong_password"))
        if username in self.logged_in_users:
            return fail(self._text("already_logged_in", username=username))
        self.logged_in_users.append(username)
        return {"status": True, "message": self._text("food_logged_in", username=username)}

    def view_logged_in_users(self) -> dict[str, Any]:
        if not self.logged_in_users:
            return fail(self._text("nobody_logged_in"))
        return {"status": True, "logged_in_users": self.logged_in_users}

    def check_balance(self, user_name: str) -> Any:
        if user_name in self.users:
            return self.users[user_name]["balance"]
        return 0.0

    def add_food_delivery_order(self, username: str, merchant_name: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        if username not in self.logged_in_users:
            return fail(self._text("not_on_food_platform", username=username))
        if merchant_name not in self.merchant_list:
            return fail(self._text("no_merchant"))
        total_price: Any = 0.0
        order_items = []
        for item in items:
            product_name = item.get("product")
            quantity = item.get("quantity", 1)
            if not isinstance(quantity, int) or quantity <= 0:
                return fail(self._text("bad_quantity", quantity=quantity, product=product_name))
            product = next((p for p in self.merchant_list[merchant_name]["menu"] if p["product"] == product_name), None)
            if product is None:
                return fail(self._text("no_product", product=product_name, merchant=merchant_name))
            total_price += product["price"] * quantity
            order_items.append({"product": product_name, "quantity": quantity, "price_per_unit": product["price"]})
        if official_insufficient_balance(self._language, total_price, self.users[username]["balance"]):
            return fail(self._text("insufficient_balance"))
        self.users[username]["balance"] -= total_price
        self.orders.append({"user_name": username, "merchant_name": merchant_name, "items": order_items, "total_price": total_price})
        return {"status": True, "message": self._text("order_placed", merchant=merchant_name, total=total_price)}

    def get_products(self, merchant_name: str) -> Any:
        merchant = self.merchant_list.get(merchant_name)
        if merchant:
            return merchant["menu"]
        return fail(self._text("unknown_merchant", merchant=merchant_name))

    def view_orders(self, user_name: str) -> dict[str, Any]:
        orders = [order for order in self.orders if order["user_name"] == user_name]
        if not orders:
            return fail(self._text("no_orders"))
        return {"status": True, "orders": orders}

    def search_orders(self, keyword: str) -> dict[str, Any]:
        needle = keyword.lower()
        found = [
            order for order in self.orders
            if needle in order["merchant_name"].lower() or any(official_search_orders_item_match(self._language, needle, item) for item in order.get("items", []))
        ]
        if not found:
            return fail(self._text("no_matching_orders"))
        return {"status": True, "orders": found}


def official_insufficient_balance(language: str, total: Any, balance: Any) -> bool:
    """en refuses an order costing more than the balance; zh also one costing exactly the balance."""
    return bool(total >= balance if language == "zh" else total > balance)


def official_search_orders_item_match(language: str, needle: str, item: dict[str, Any]) -> bool:
    """en matches the item's product name; zh calls `.lower()` on the item dict itself and raises."""
    if language == "zh":
        raise AttributeError("'dict' object has no attribute 'lower'")
    return needle in item["product"].lower()
