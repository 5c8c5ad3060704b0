"""An airline: three users, eleven flights and four reservations. No Wi-Fi or device login here."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from evaluators.benchmarks.acebench.agent.apis.state import AppObject

# The reference fixes "now" for cancellations at 2024-07-14 06:00.
CANCELLATION_NOW = datetime(2024, 7, 14, 6, 0, 0)
FREE_BAGS = {"regular": (1, 2), "silver": (2, 3), "gold": (3, 3)}  # (economy, business)
BAG_FEE = 50


class Travel(AppObject):
    # State set from the default state and the config (AppObject); annotated only, so a missing one still raises.
    users: dict[str, dict[str, Any]]
    flights: list[dict[str, Any]]
    reservations: list[dict[str, Any]]

    def _load_scenario(self, config: dict[str, Any]) -> None:
        """The reference's Travel loader does nothing: initial_config never changes the airline."""

    def _cabins(self) -> dict[str, int]:
        """Cabin name (in this language) -> index into FREE_BAGS' pairs."""
        return {self._text("economy"): 0, self._text("business"): 1}

    def _first_flight(self, flight_no: Any) -> dict[str, Any] | None:
        """Flight numbers CZ1765 and MH2616 occur twice; lookups take the first."""
        return next((f for f in self.flights if f["flight_no"] == flight_no), None)

    def get_flight_details(self, origin: str | None = None, destination: str | None = None) -> Any:
        flights = self.flights
        if origin:
            flights = [f for f in flights if f["origin"] == origin]
        if destination:
            flights = [f for f in flights if f["destination"] == destination]
        if len(flights) == 0:
            return self._text("no_direct_flights")
        keys = ("flight_no", "origin", "destination", "depart_time", "arrival_time", "status", "seats_available",
                "economy_price", "business_price")
        return [{key: flight[key] for key in keys} for flight in flights]

    def get_user_details(self, user_id: str, password: str) -> dict[str, Any]:
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return {key: value for key, value in user.items() if key != "password"}
        return {"status": "error", "message": self._text("bad_credentials")}

    def get_reservation_details(self, reservation_id: str | None = None, user_id: str | None = None) -> Any:
        if reservation_id:
            reservations = [r for r in self.reservations if r["reservation_id"] == reservation_id]
        elif user_id:
            reservations = [r for r in self.reservations if r["user_id"] == user_id]
        else:
            return {"status": "error", "message": self._text("need_reservation_or_user")}
        return [{**r, "flight_info": self._first_flight(r["flight_no"])} for r in reservations]

    def authenticate_user(self, user_id: Any, password: Any) -> dict[str, Any]:
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return user
        return {"status": "error", "message": self._text("bad_credentials")}

    def get_baggage_allowance(self, membership_level: Any, cabin_class: Any) -> int:
        allowance = {level: dict(zip(self._cabins(), bags)) for level, bags in FREE_BAGS.items()}
        return allowance.get(membership_level, {}).get(cabin_class, 0)

    def find_transfer_flights(self, origin_city: Any, transfer_city: Any, destination_city: Any) -> Any:
        first_legs = [f for f in self.flights
                      if f["origin"] == origin_city and f["destination"] == transfer_city and f["status"] == "available"]
        second_legs = [f for f in self.flights
                       if f["origin"] == transfer_city and f["destination"] == destination_city and f["status"] == "available"]
        pairs = []
        for first in first_legs:
            arrival = datetime.strptime(first["arrival_time"], "%Y-%m-%d %H:%M:%S")
            for second in second_legs:
                if arrival < datetime.strptime(second["depart_time"], "%Y-%m-%d %H:%M:%S"):
                    pairs.append({"first_leg": first, "second_leg": second})
        return pairs if pairs else self._text("no_transfer_flights")

    def calculate_baggage_fee(self, membership_level: Any, cabin_class: Any, baggage_count: Any) -> Any:
        """Unknown levels or cabins raise KeyError (an execution error), unlike get_baggage_allowance."""
        free = {level: dict(zip(self._cabins(), bags)) for level, bags in FREE_BAGS.items()}
        return max(baggage_count - free[membership_level][cabin_class], 0) * BAG_FEE

    def update_balance(self, user: Any, payment_method: Any, amount: Any) -> bool:
        if payment_method == "cash":
            if user["cash_balance"] + amount < 0:
                return False
            user["cash_balance"] += amount
        elif payment_method == "bank":
            if user["bank_balance"] + amount < 0:
                return False
            user["bank_balance"] += amount
        return True

    def reserve_flight(self, user_id: Any, password: Any, flight_no: Any, cabin: Any, payment_method: Any, baggage_count: Any) -> str:
        user = official_reserve_flight_credentials_not_checked(self.authenticate_user(user_id, password))
        flight = next((f for f in self.flights if f["flight_no"] == flight_no and f["status"] == "available"), None)
        price = official_flight_price_by_cabin(flight, cabin, self._text("economy"))
        total_cost = price + self.calculate_baggage_fee(user["membership_level"], cabin, baggage_count)
        if payment_method not in ["cash", "bank"]:
            return self._text("bad_payment_method")
        balance_key = f"{payment_method}_balance"
        # user_id is a user here: with unknown credentials reading the member level above raised
        account = self.users[user_id]
        if total_cost > account[balance_key]:
            return self._text(f"{payment_method}_insufficient")
        account[balance_key] -= total_cost
        assert flight is not None  # official_flight_price_by_cabin raised for a missing flight
        flight["seats_available"] -= 1
        reservation_id = f"res_{len(self.reservations) + 1}"
        self.reservations.append({
            "reservation_id": reservation_id, "user_id": user_id, "flight_no": flight_no,
            "payment_method": payment_method, "cabin": cabin, "baggage": baggage_count,
        })
        return self._text("booked", reservation_id=reservation_id, cost=total_cost)

    def modify_flight(self, user_id: Any, reservation_id: Any, new_flight_no: Any = None, new_cabin: Any = None,
                      add_baggage: Any = 0, new_payment_method: Any = None) -> str:
        reservation = next((r for r in self.reservations if r["reservation_id"] == reservation_id and r["user_id"] == user_id), None)
        if not reservation:
            return self._text("reservation_not_found")
        current_flight = self._first_flight(reservation["flight_no"])
        if not current_flight:
            return self._text("flight_not_found")
        payment_method = new_payment_method if new_payment_method else reservation["payment_method"]
        user = self.users[user_id]
        messages = []
        if new_flight_no and new_flight_no != reservation["flight_no"]:
            new_flight = self._first_flight(new_flight_no)
            if new_flight and new_flight["origin"] == current_flight["origin"] and new_flight["destination"] == current_flight["destination"]:
                reservation["flight_no"] = new_flight_no  # no fare difference is charged for the change
                messages.append(self._text("flight_changed"))
            else:
                return self._text("flight_change_failed")
        if new_cabin and new_cabin != reservation.get("cabin"):
            difference = official_cabin_difference_on_old_flight(current_flight, reservation["cabin"], new_cabin, self._cabins())
            reservation["cabin"] = new_cabin
            if difference > 0:
                paid = self.update_balance(user, payment_method, -difference)
                messages.append(self._text("cabin_difference_paid", difference=difference) if paid else self._text("cabin_difference_unpaid"))
            elif difference < 0:
                self.update_balance(user, payment_method, -difference)
                messages.append(self._text("cabin_difference_refunded", difference=-difference))
        if add_baggage > 0:
            allowance = self.get_baggage_allowance(user["membership_level"], reservation["cabin"])
            total_bags = reservation.get("baggage", 0) + add_baggage
            fee = max(0, total_bags - allowance) * BAG_FEE
            if fee > 0:
                paid = self.update_balance(user, payment_method, -fee)
                messages.append(self._text("baggage_fee_paid", fee=fee) if paid else self._text("baggage_fee_unpaid"))
            reservation["baggage"] = total_bags
        if not messages:
            messages.append(self._text("modified_without_fees"))
        return " ".join(messages)

    def cancel_reservation(self, user_id: Any, reservation_id: Any, reason: Any) -> str:
        user = self.users.get(user_id, None)
        if not user:
            return self._text("invalid_user")
        reservation = next((r for r in self.reservations if r["reservation_id"] == reservation_id and r["user_id"] == user_id), None)
        if not reservation:
            return self._text("invalid_reservation")
        flight = self._first_flight(reservation["flight_no"])
        if not flight:
            return self._text("invalid_flight")
        departure = datetime.strptime(flight["depart_time"], "%Y-%m-%d %H:%M:%S")
        if CANCELLATION_NOW > departure:
            return self._text("segment_used")
        fare = flight["economy_price"] if reservation["cabin"] == self._text("economy") else flight["business_price"]
        # Every refund goes to cash and the reservation stays: see official_cancel_keeps_reservation.
        if reason == self._text("airline_cancellation_reason"):
            self.process_refund(user, fare)
            return self._text("cancelled_by_airline", refund=fare)
        if departure - CANCELLATION_NOW > timedelta(days=1):
            self.process_refund(user, fare)
            return self._text("free_cancellation", refund=fare)
        fee = fare * 0.1
        refund = fare - fee
        self.process_refund(user, refund)
        return self._text("late_cancellation", fee=fee, refund=refund)

    def process_refund(self, user: Any, amount: Any) -> None:
        official_cancel_keeps_reservation(user, amount)

    def calculate_price_difference(self, flight: Any, old_cabin: Any, new_cabin: Any) -> Any:
        return official_cabin_difference_on_old_flight(flight, old_cabin, new_cabin, self._cabins())


def official_reserve_flight_credentials_not_checked(user: dict[str, Any]) -> dict[str, Any]:
    """Wrong credentials yield an error record, not a failure; the booking then raises
    KeyError('membership_level') once it reads the member level."""
    return user


def official_flight_price_by_cabin(flight: dict[str, Any] | None, cabin: Any, economy: str) -> Any:
    """Exactly the economy cabin name pays the economy fare, any other string the business fare;
    an unknown or unavailable flight number raises TypeError (the flight is None)."""
    if flight is None:
        raise TypeError("'NoneType' object is not subscriptable")
    return flight["economy_price"] if cabin == economy else flight["business_price"]


def official_cabin_difference_on_old_flight(flight: dict[str, Any], old_cabin: Any, new_cabin: Any, cabins: dict[str, int]) -> Any:
    """New minus old cabin price, both on the reservation's current (old) flight; unknown cabins cost 0."""
    prices = {name: flight["economy_price" if index == 0 else "business_price"] for name, index in cabins.items()}
    return prices.get(new_cabin, 0) - prices.get(old_cabin, 0)


def official_cancel_keeps_reservation(user: dict[str, Any], amount: Any) -> None:
    """Cancelling refunds into cash_balance and leaves the reservation in place (twice refunds twice)."""
    user["cash_balance"] += amount
