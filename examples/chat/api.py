"""A small chat-store API: `saveChatMessage` keeps a message per user, `chatMessages(userId:)` lists them.

It is what a tools config's `InternalSaveChatMessage` and `InternalGetChatMessages` entries talk to.
`make_schema()` gives a schema over a fresh, empty store, so every test starts from nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import strawberry


@strawberry.type(description="One stored message of a conversation.")
class ChatMessage:
    user_id: str
    role: str
    content: str
    function_call: str | None = strawberry.field(default=None, description="The assistant's tool calls, as JSON.")
    name: str | None = strawberry.field(default=None, description="The tool a result belongs to.")
    tool_call_id: str | None = strawberry.field(default=None, description="The call a tool result answers.")


@dataclass
class ChatStorage:
    """The messages of every user, in the order they were saved."""

    messages: list[ChatMessage] = field(default_factory=list)


def make_schema(storage: ChatStorage | None = None) -> strawberry.Schema:
    store = storage if storage is not None else ChatStorage()

    @strawberry.type
    class Query:
        @strawberry.field(description="A user's conversation, oldest message first.")
        def chat_messages(self, user_id: str) -> list[ChatMessage]:
            return [m for m in store.messages if m.user_id == user_id]

    @strawberry.type
    class Mutation:
        @strawberry.mutation(description="Stores one message of a user's conversation.")
        def save_chat_message(
            self,
            user_id: str,
            role: str,
            content: str,
            function_call: str | None = None,
            name: str | None = None,
            tool_call_id: str | None = None,
        ) -> ChatMessage:
            message = ChatMessage(
                user_id=user_id, role=role, content=content, function_call=function_call, name=name, tool_call_id=tool_call_id
            )
            store.messages.append(message)
            return message

    made = strawberry.Schema(query=Query, mutation=Mutation)
    made.storage = store  # type: ignore[attr-defined]
    return made


schema = make_schema()
