"""Meilisearch-compatible error model: the code table and the exception every layer raises.

The HTTP status and error type are properties of the code (core.md §2.2), so callers only pick a code and
write a message; the gateway turns any ``ApiError`` into the wire object and status.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, cast

ErrorType = Literal["invalid_request", "internal", "auth", "system"]

_LINK_PREFIX: Final = "https://docs.meilisearch.com/errors#"
_IO_ERROR_HINT: Final = (
    ". This error generally happens when you have no space left on device or when your database doesn't have"
    " read or write right."
)

# All 288 codes of core.md §2.2, in source order. A token is `code`, `code=STATUS` or `code=STATUS/type`;
# a missing status means 400, a missing type means invalid_request.
_TABLE: Final = """
api_key_already_exists=409 api_key_not_found=404 index_scoped_api_key_with_global_action bad_parameter
bad_request database_size_limit_reached=500/internal document_not_found=404 dump_already_processing=409
dump_not_found=404 dump_process_failed=500/internal duplicate_index_found immutable_api_key_actions
immutable_api_key_created_at immutable_api_key_expires_at immutable_api_key_indexes
immutable_api_key_key immutable_api_key_uid immutable_api_key_updated_at immutable_index_created_at
immutable_index_updated_at import_task_already_received=412 import_task_unknown_remote=412
receive_import_finished_unknown_remote=412 import_task_without_network_task=503 index_already_exists=409
index_creation_failed=500/internal index_not_found=404 index_primary_key_already_exists
index_primary_key_multiple_candidates_found index_primary_key_no_candidate_found internal=500/internal
invalid_api_key=403/auth invalid_api_key_actions invalid_api_key_description invalid_api_key_expires_at
invalid_api_key_indexes invalid_api_key_limit invalid_api_key_name invalid_api_key_offset
invalid_api_key_uid invalid_content_type=415 invalid_document_csv_delimiter invalid_document_fields
invalid_document_retrieve_vectors missing_document_filter missing_document_edition_function
inconsistent_document_change_headers invalid_document_filter invalid_document_sort
invalid_document_use_network invalid_document_geo_field invalid_document_geojson_field
invalid_header_value invalid_vector_dimensions invalid_vectors_type invalid_document_id
invalid_document_ids invalid_document_limit invalid_document_offset invalid_search_embedder
invalid_similar_embedder invalid_search_hybrid_query invalid_index_limit invalid_index_offset
invalid_index_primary_key invalid_index_custom_metadata invalid_skip_creation invalid_index_uid
invalid_multi_search_facets invalid_multi_search_facets_by_index invalid_multi_search_facet_order
invalid_multi_search_query_personalization invalid_multi_search_query_show_performance_details
invalid_multi_search_federated invalid_multi_search_federation_options
invalid_multi_search_max_values_per_facet invalid_multi_search_merge_facets
invalid_multi_search_query_facets invalid_multi_search_distinct invalid_multi_search_query_pagination
invalid_multi_search_query_ranking_rules invalid_multi_search_query_position invalid_multi_search_remote
invalid_multi_search_weight invalid_network_leader invalid_network_remotes invalid_network_shards
invalid_network_self invalid_network_search_api_key invalid_network_write_api_key invalid_network_url
invalid_search_attributes_to_search_on invalid_search_attributes_to_crop
invalid_search_attributes_to_highlight invalid_similar_attributes_to_retrieve
invalid_similar_retrieve_vectors invalid_search_attributes_to_retrieve
invalid_search_ranking_score_threshold invalid_similar_ranking_score_threshold
invalid_search_retrieve_vectors invalid_search_crop_length invalid_search_crop_marker
invalid_search_facets invalid_search_semantic_ratio invalid_search_locales
invalid_facet_search_exhaustive_facet_count invalid_facet_search_facet_name invalid_similar_id
invalid_search_filter invalid_similar_filter invalid_search_highlight_post_tag
invalid_search_highlight_pre_tag invalid_search_hits_per_page invalid_similar_limit invalid_search_limit
invalid_search_matching_strategy invalid_similar_offset invalid_search_offset invalid_search_page
invalid_search_q invalid_facet_search_query invalid_facet_search_name facet_search_disabled
invalid_search_vector invalid_search_media invalid_search_show_matches_position
invalid_search_show_ranking_score invalid_similar_show_ranking_score
invalid_search_show_ranking_score_details invalid_search_show_performance_details
invalid_search_use_network invalid_similar_show_ranking_score_details
invalid_similar_show_performance_details invalid_search_sort invalid_search_distinct
invalid_search_personalize invalid_search_personalize_user_context invalid_search_media_and_vector
invalid_settings_displayed_attributes invalid_settings_distinct_attribute
invalid_settings_proximity_precision invalid_settings_facet_search invalid_settings_prefix_search
invalid_settings_faceting invalid_settings_filterable_attributes invalid_settings_foreign_keys
invalid_settings_pagination invalid_settings_search_cutoff_ms invalid_settings_embedders
invalid_settings_ranking_rules invalid_settings_searchable_attributes
invalid_settings_sortable_attributes invalid_settings_stop_words invalid_settings_non_separator_tokens
invalid_settings_separator_tokens invalid_settings_dictionary invalid_settings_synonyms
invalid_settings_typo_tolerance invalid_settings_localized_attributes invalid_state=500/internal
invalid_stats_show_internal_database_sizes invalid_stats_size_format invalid_store_file=500/internal
invalid_swap_duplicate_index_found invalid_swap_indexes invalid_swap_rename
invalid_task_after_enqueued_at invalid_task_after_finished_at invalid_task_after_started_at
invalid_task_before_enqueued_at invalid_task_before_finished_at invalid_task_before_started_at
invalid_task_canceled_by invalid_task_from invalid_task_limit invalid_task_reverse invalid_task_statuses
invalid_task_types invalid_task_uids invalid_batch_uids io_error=422/system feature_not_enabled
malformed_payload max_fields_limit_exceeded missing_api_key_actions missing_api_key_expires_at
missing_api_key_indexes missing_authorization_header=401/auth missing_content_type=415
missing_document_id missing_facet_search_facet_name missing_index_uid missing_master_key=401/auth
missing_network_url missing_payload missing_search_hybrid missing_swap_indexes missing_task_filters
network_version_mismatch=412 no_space_left_on_device=422/system not_leader payload_too_large=413
remote_bad_response=502/system remote_bad_request unknown_remote
remote_could_not_send_request=502/system remote_invalid_api_key=403/auth remote_remote_error=502/system
remote_timeout=502/system too_many_search_requests=503/system task_not_found=404 task_file_not_found=404
batch_not_found=404 too_many_open_files=422/system too_many_vectors unexpected_network_previous_remotes
network_version_too_old unprocessed_network_task unretrievable_document=400/internal
unretrievable_error_code unsupported_media_type=415 invalid_s_3_snapshot_request=400/internal
invalid_s_3_snapshot_parameters=400/internal s_3_snapshot_server_error=502/internal
vector_embedding_error not_found_similar_id invalid_document_edition_context
invalid_document_edition_function_filter edit_documents_by_function_error invalid_settings_index_chat
invalid_export_url invalid_export_api_key invalid_export_payload_size invalid_export_indexes_patterns
invalid_export_index_filter invalid_export_index_override_settings
unimplemented_external_function_calling=501 unimplemented_non_streaming_chat_completions=501
unimplemented_multi_choice_chat_completions=501 chat_not_found=404
invalid_chat_setting_document_template invalid_chat_completion_org_id invalid_chat_completion_project_id
invalid_chat_completion_api_version invalid_chat_completion_deployment_id invalid_chat_completion_source
invalid_chat_completion_base_api invalid_chat_completion_api_key invalid_chat_completion_prompts
invalid_chat_completion_system_prompt invalid_chat_completion_search_description_prompt
invalid_chat_completion_search_query_param_prompt invalid_chat_completion_search_filter_param_prompt
invalid_chat_completion_search_index_uid_param_prompt invalid_chat_completion_pre_query_prompt
invalid_index_fields_filter invalid_index_fields_filter_attribute_patterns
invalid_index_fields_filter_displayed invalid_index_fields_filter_searchable
invalid_index_fields_filter_sortable invalid_index_fields_filter_distinct
invalid_index_fields_filter_ranking_rule invalid_index_fields_filter_filterable
requires_enterprise_edition=451 invalid_render_template invalid_render_input
render_document_not_found=404 template_parsing_error template_rendering_error invalid_webhooks
invalid_webhook_url invalid_webhook_headers immutable_webhook invalid_webhook_uuid webhook_not_found=404
immutable_webhook_uuid immutable_webhook_is_editable invalid_dynamic_search_rule_offset
invalid_dynamic_search_rule_limit invalid_dynamic_search_rule_filter
invalid_dynamic_search_rule_description invalid_dynamic_search_rule_priority
invalid_dynamic_search_rule_active invalid_dynamic_search_rule_conditions
invalid_dynamic_search_rule_actions invalid_dynamic_search_rule_filter_query
invalid_dynamic_search_rule_filter_active dynamic_search_rule_not_found=404
""".strip()

_SIFT_TABLE: Final = """
scheduler_unavailable=503/system
""".strip()
"""Codes of Sift's own, for states a single-process engine never meets: the gateway answering while the
scheduler process restarts."""


def _parse_table(table: str) -> dict[str, tuple[int, ErrorType]]:
    codes: dict[str, tuple[int, ErrorType]] = {}
    for token in table.split():
        code, _, rest = token.partition("=")
        status, _, kind = rest.partition("/")
        codes[code] = (int(status or 400), cast(ErrorType, kind or "invalid_request"))
    return codes


CONTRACT_CODES: Final[dict[str, tuple[int, ErrorType]]] = _parse_table(_TABLE)
SIFT_CODES: Final[dict[str, tuple[int, ErrorType]]] = _parse_table(_SIFT_TABLE)
ERROR_CODES: Final[dict[str, tuple[int, ErrorType]]] = CONTRACT_CODES | SIFT_CODES


class ApiError(Exception):
    """An error the API reports to the client, or stores in ``task.error``."""

    def __init__(self, code: str, message: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        if code == "io_error" and not message.endswith(_IO_ERROR_HINT):  # idempotent for stored errors
            message += _IO_ERROR_HINT
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return ERROR_CODES[self.code][0]

    @property
    def type(self) -> ErrorType:
        return ERROR_CODES[self.code][1]

    @property
    def link(self) -> str:
        return _LINK_PREFIX + self.code

    def to_dict(self) -> dict[str, str]:
        """The wire object, keys in the order clients see them."""
        return {"message": self.message, "code": self.code, "type": self.type, "link": self.link}

    def __repr__(self) -> str:
        return f"ApiError({self.code!r}, {self.message!r})"


class ParameterError(Exception):
    """An error whose message is fixed but whose code depends on the route that met it.

    A filter or sort is parsed the same way for search, similar documents and document lists, each
    answering with its own code (``invalid_search_filter``, ``invalid_document_filter``, ...).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def api_error(self, code: str) -> ApiError:
        return ApiError(code, self.message)


def _ticked(values: Iterable[str]) -> str:
    return ", ".join(f"`{value}`" for value in values)


def index_prefix(index_uid: str | None) -> str:
    """``Index `uid`: `` opening search and task errors about an index's settings; document reads
    (``index_uid`` None) name no index, as in the reference."""
    return "" if index_uid is None else f"Index `{index_uid}`: "


def index_not_found(uid: str) -> ApiError:
    return ApiError("index_not_found", f"Index `{uid}` not found.")


def api_key_not_found(uid_or_key: str) -> ApiError:
    return ApiError("api_key_not_found", f"API key `{uid_or_key}` not found.")


def index_already_exists(uid: str) -> ApiError:
    return ApiError("index_already_exists", f"Index `{uid}` already exists.")


def invalid_index_uid(uid: str) -> ApiError:
    # The message says 512 bytes although 400 is enforced: kept verbatim for compatibility (core.md §5).
    return ApiError(
        "invalid_index_uid",
        f"`{uid}` is not a valid index uid. Index uid can be an integer or a string containing only"
        " alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.",
    )


def missing_payload(payload_format: str) -> ApiError:
    """``payload_format`` is `json`, `ndjson` or `csv`."""
    return ApiError("missing_payload", f"A {payload_format} payload is missing.")


def malformed_json(detail: str) -> ApiError:
    """Unparsable body of a JSON-body route; ``detail`` is the parser's serde-style message."""
    return ApiError("malformed_payload", f"The json payload provided is malformed. `{detail}`.")


def payload_too_large(limit_text: str) -> ApiError:
    """``limit_text`` is the human-formatted limit, e.g. `100 MB` or `10 MiB`."""
    return ApiError(
        "payload_too_large",
        f"The provided payload reached the size limit. The maximum accepted payload size is {limit_text}.",
    )


def missing_content_type(accepted: Iterable[str]) -> ApiError:
    return ApiError(
        "missing_content_type",
        "A Content-Type header is missing. Accepted values for the Content-Type header are: "
        + _ticked(accepted),
    )


def invalid_content_type(raw: str, accepted: Iterable[str]) -> ApiError:
    return ApiError(
        "invalid_content_type",
        f"The Content-Type `{raw}` is invalid. Accepted values for the Content-Type header are: "
        + _ticked(accepted),
    )
