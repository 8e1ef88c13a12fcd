"""The presenters guide's example: one response built by hand, and a Presenter for invoices with its customer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from webapp import BuiltResult, Presenter, Suggestion, UiBlock, response, ui

__all__ = ["CUSTOMER", "INVOICES", "SAMPLE", "Customer", "Invoice", "revenue"]


# --8<-- [start:response]
def revenue() -> BuiltResult:
    return (
        response({"month": "2024-05", "amount_cents": 452000})
        .ui_block(ui.echarts({"series": [{"type": "bar", "data": [3100, 4200]}]}, title="Revenue", width="full"))
        .rules(["amount_cents is in CENTS. Divide by 100."])
        .suggest([Suggestion("billing_remind", "Send a payment reminder")])
        .build()  # an mcp CallToolResult with four text blocks
    )


# --8<-- [end:response]
# --8<-- [start:presenter]
class Customer(BaseModel):
    name: str
    email: str


class Invoice(BaseModel):
    number: str
    amount_cents: int = Field(description="The amount in CENTS; divide by 100 for euros.")
    status: str
    customer: Customer | None = None  # fields the schema does not name (an internal note) never leave the server


def _overdue(invoices: list[dict[str, Any]], ctx: Any) -> Iterable[UiBlock | None]:
    late = [invoice for invoice in invoices if invoice["status"] == "overdue"]
    rows = [[invoice["number"], invoice["amount_cents"] / 100] for invoice in late]
    return [ui.table(["invoice", "€"], rows, title="Overdue") if late else None]


CUSTOMER = Presenter("Customer", Customer).rules(["Write to a customer through billing_remind, never directly."])

INVOICES = (
    Presenter("Invoice", Invoice)
    .limit(50)
    .redact(["customer.email"])
    .embed("customer", CUSTOMER)
    .collection_ui(_overdue)
    .suggest(lambda invoice, ctx: [Suggestion("billing_remind", "Remind the customer of an overdue invoice.")])
)
# --8<-- [end:presenter]
# --8<-- [start:sample]
SAMPLE = [
    {
        "number": "A-1",
        "amount_cents": 12000,
        "status": "overdue",
        "note": "call before the 5th",
        "customer": {"name": "Ada", "email": "ada@example.com"},
    }
]
# --8<-- [end:sample]
