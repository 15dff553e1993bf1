"""Custom search attributes: how isolation decisions are found in the Temporal UI."""

from temporalio.common import SearchAttributeKey

CODEBASE = SearchAttributeKey.for_keyword("IsolatorCodebase")
PLATFORM = SearchAttributeKey.for_keyword("IsolatorPlatform")
CONVERSATION = SearchAttributeKey.for_keyword("IsolatorConversation")
BRANCH = SearchAttributeKey.for_keyword("IsolatorBranch")
OUTCOME = SearchAttributeKey.for_keyword("IsolatorOutcome")
# environment workflows: what the environment is for, and whether it still exists
WORKFLOW_TYPE = SearchAttributeKey.for_keyword("IsolatorWorkflowType")
WORKFLOW_ID = SearchAttributeKey.for_keyword("IsolatorWorkflowId")
STATUS = SearchAttributeKey.for_keyword("IsolatorStatus")

ALL = [CODEBASE, PLATFORM, CONVERSATION, BRANCH, OUTCOME, WORKFLOW_TYPE, WORKFLOW_ID, STATUS]
