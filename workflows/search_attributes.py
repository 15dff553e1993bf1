"""Custom search attributes: how isolation decisions are found in the Temporal UI."""

from temporalio.common import SearchAttributeKey

CODEBASE = SearchAttributeKey.for_keyword("IsolatorCodebase")
PLATFORM = SearchAttributeKey.for_keyword("IsolatorPlatform")
CONVERSATION = SearchAttributeKey.for_keyword("IsolatorConversation")
BRANCH = SearchAttributeKey.for_keyword("IsolatorBranch")
OUTCOME = SearchAttributeKey.for_keyword("IsolatorOutcome")

ALL = [CODEBASE, PLATFORM, CONVERSATION, BRANCH, OUTCOME]
