"""The label taxonomy v1.1 ("0615 파란색 라벨 정의서"), transcribed from the source document.

This module is the single place in the code base that knows label codes. Everything else asks it
(or the code tables seeded from it). Codes are immutable and the lists are append-only: to add a
label, append it here with ``since`` set to the new version, bump ``TAXONOMY_VERSION`` (minor), and
write a data migration that calls ``taxonomy.seeding.sync_catalogue`` (see README, "Adding a label").
"""

from __future__ import annotations

from dataclasses import dataclass, field

TAXONOMY_VERSION = "1.1.0"


@dataclass(frozen=True)
class Stage:
    code: str
    ko: str
    definition: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Speaker:
    code: str
    ko: str
    letter: str  # the utterance_id letter: C (상N) / K (내N)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Category:
    code: str
    ko: str


@dataclass(frozen=True)
class Technique:
    code: str
    ko: str
    category: str
    definition: str
    surface_labels: tuple[str, ...] = ()
    since: str = "1.0.0"
    example: str = ""
    source_family: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClientState:
    code: str
    ko: str
    definition: str
    surface_labels: tuple[str, ...] = ()
    since: str = "1.0.0"
    safety_critical: bool = False
    example: str = ""
    source_family: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommentKind:
    code: str
    ko: str
    definition: str


@dataclass(frozen=True)
class DialogAct:
    code: str
    ko: str
    closing_ack: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


STAGES: tuple[Stage, ...] = (
    Stage("라포", "라포 형성", "안전감·관계 구축, 비밀보장 구조화, 비자발성 완화", ("rapport",)),
    Stage("탐색", "탐색", "호소문제·정서·인지·위험요인(자살/자해) 탐색", ("exploration",)),
    Stage("개입", "개입", "직면·해석·인지재구성·교정적 정서체험", ("intervention",)),
    Stage("정리", "정리", "요약·과제·다음 회기 연결·종결", ("closing",)),
)

SPEAKERS: tuple[Speaker, ...] = (
    Speaker("counselor", "상담자(수련생/상담사 AI)", "C", ("상담자", "상", "counsellor")),
    Speaker("client", "내담자(가상내담자 AI)", "K", ("내담자", "내")),
)

CATEGORIES: tuple[Category, ...] = (
    Category("RELATIONAL", "관계 형성"),
    Category("EXPLORATORY", "탐색"),
    Category("INTERVENTION", "개입"),
    Category("STABILIZING", "안정/지지"),
    Category("STRUCTURING", "구조화"),
)

_V11 = "1.1.0"

TECHNIQUES: tuple[Technique, ...] = (
    # 3.1 RELATIONAL
    Technique(
        "empathy",
        "공감",
        "RELATIONAL",
        '내담자의 감정·입장을 정확히 알아차리고 그대로 되돌려, "이해받고 있다"를 전달',
        ("공감", "한숨이 무겁게 느껴지네요"),
    ),
    Technique(
        "reflection",
        "반영",
        "RELATIONAL",
        "내담자 발화·비언어의 핵심(정서/내용)을 거울처럼 재진술",
        ("반영", "정서 반영", "내담자의 반응을 반영함"),
    ),
    Technique(
        "validation",
        "타당화",
        "RELATIONAL",
        "내담자의 감정·반응이 그 상황에서 자연스럽고 정당함을 인정",
        ("타당화", "감정 노출의 타당화"),
    ),
    Technique(
        "holding",
        "홀딩",
        "RELATIONAL",
        "침묵·머뭇거림을 재촉 없이 견디며 안전한 공간을 유지(기다려 줌)",
        ("홀딩", "탐색과 홀딩"),
    ),
    Technique(
        "self_disclosure",
        "자기공개",
        "RELATIONAL",
        "상담자 자신의 정보·경험·마음을 라포 목적으로 적절히 개방",
        ("라포형성을 위한 상담자의 자기 개방",),
    ),
    Technique(
        "affect_conveyance",
        "정서 전달",
        "RELATIONAL",
        "내담자를 향한 상담자 자신의 정서·태도를 명시적으로 전달",
        ("상담자의 정서 전달",),
    ),
    Technique(
        "humor",
        "유머",
        "RELATIONAL",
        "무거운 분위기를 가볍게 만들어 참여를 촉진(상황·관계 고려)",
        ("유머",),
    ),
    # 3.2 EXPLORATORY
    Technique(
        "exploration",
        "탐색",
        "EXPLORATORY",
        "경험·맥락·의미를 더 드러내도록 묻거나 머무름",
        ("탐색", "탐색질문"),
    ),
    Technique(
        "facilitative_question",
        "촉진질문",
        "EXPLORATORY",
        "내담자가 더 말하도록 여는 개방형/참여 촉진 질문",
        ("촉진", "참여 촉진 질문"),
    ),
    Technique(
        "risk_assessment",
        "위험사정",
        "EXPLORATORY",
        "자살/자해/타해 위험 요인·경험·계획을 직접 탐색",
        ("위험요인 탐색", "자해 위험 및 경험 탐색"),
    ),
    Technique(
        "consent_motivation_check",
        "동의·동기 확인",
        "EXPLORATORY",
        "상담 동의·문제의식·변화 동기 수준을 확인",
        ("동의확인, 동기수준 확인",),
    ),
    Technique(
        "opinion_check",
        "의견 확인",
        "EXPLORATORY",
        "내담자의 생각·반응·주호소를 되짚어 확인",
        ("내담자 의견 확인", "주호소 문제 재확인"),
    ),
    # 3.3 INTERVENTION
    Technique(
        "confrontation",
        "직면",
        "INTERVENTION",
        "내담자 발화·행동의 불일치/모순을 근거와 함께 마주하게 함",
        ("기초자료를 활용하여 반응의 불일치에 직면시킴",),
    ),
    Technique(
        "interpretation",
        "해석",
        "INTERVENTION",
        "표면 너머의 의미·동기·패턴을 가설로 제시",
        ("모순의 의미를 해석함", "비언어적 자극 해석", "행동의 재해석"),
    ),
    # 3.4 STABILIZING
    Technique(
        "stabilization",
        "안정화",
        "STABILIZING",
        "각성·정서를 진정시켜 안전 범위로 되돌림",
        ("안정화",),
    ),
    Technique(
        "hope_instillation",
        "희망고취",
        "STABILIZING",
        "변화 가능성·욕구를 비추어 희망을 불어넣음",
        ("동기부여, 희망고취", "희망 고취, 욕구 반영"),
    ),
    Technique(
        "reinforcement",
        "강화",
        "STABILIZING",
        "바람직한 개방·시도를 인정·격려해 지속을 촉진",
        ("강화",),
    ),
    Technique(
        "normalization",
        "정상화",
        "STABILIZING",
        "반응(감정 노출 등)을 보편적 경험으로 정상화",
        ("감정 반응을 노출하는 것을 정상화함",),
    ),
    # 3.5 STRUCTURING
    Technique(
        "principle_explanation",
        "상담원칙 설명",
        "STRUCTURING",
        "비밀보장·예외 등 상담 원칙·틀을 안내",
        ("상담원칙에 대한 설명", "비밀보장 제외 원칙 설명"),
    ),
    Technique(
        "psychoeducation",
        "심리교육",
        "STRUCTURING",
        "보편적 교범·정보를 주관적 해석과 구별해 전달",
        ("보편적 교범 전달, 주관적 해석과 구별",),
    ),
    Technique(
        "homework",
        "과제 부여",
        "STRUCTURING",
        "회기 간 실천 과제를 이해 가능하게 제시·확인",
        ("다음 회기까지 해 와야 하는 과제 설명",),
    ),
    # 3.6 v1.1.0 additions
    Technique(
        "clarification",
        "명료화",
        "EXPLORATORY",
        "내담자 말의 뜻이 모호할 때 이해를 정확히 맞추기 위해 되묻거나 확인한다. 반영과 달리 되돌려 "
        "주기보다 '무엇을 뜻하는지'를 좁혀 묻는 데 목적이 있다.",
        since=_V11,
        example="방금 '견디기 힘들다'고 하셨는데, 그게 어떤 느낌에 더 가까운지 조금만 더 말해 줄 수 있을까요?",
        source_family=("cbt_video", "ch3_gestalt"),
    ),
    Technique(
        "scaling",
        "수치화 질문",
        "EXPLORATORY",
        "감정·증상의 강도를 숫자 척도로 표현하게 해 상태와 변화를 가늠한다. 막연한 정서를 비교 가능한 "
        "수치로 옮겨 개입 전후를 확인하는 CBT 기법이다.",
        since=_V11,
        example="지금 그 불안이 0에서 10 중에 어느 정도인지 숫자로 말해 볼 수 있을까요?",
        source_family=("cbt_video",),
    ),
    Technique(
        "chain_analysis",
        "체인분석",
        "EXPLORATORY",
        "문제행동에 이르기까지의 촉발사건·감정·생각·행동을 사슬로 잘게 되짚어 개입 지점을 찾는다. "
        "행동을 평가하지 않고 순서를 구체적으로 복원하는 것이 핵심이다.",
        since=_V11,
        example="그 충동이 올라오기 직전에 어떤 일이 있었고, 그때 무슨 감정이 먼저 지나갔는지 순서대로 같이 "
        "짚어 볼까요?",
        source_family=("dbt_video",),
    ),
    Technique(
        "cognitive_restructuring",
        "인지재구성",
        "INTERVENTION",
        "이분법·파국화·독심술 같은 인지 왜곡을 확인하고, 연속선 사고·핵심신념 검토를 통해 사고를 "
        "재구성한다. cbt 파일 55건의 최대 공백이던 핵심 개입이다.",
        since=_V11,
        example="'완벽하지 않으면 실패'라고 느껴진다고 하셨는데, 그 사이에 여러 단계가 있다면 오늘 일은 "
        "어디쯤 놓일까요?",
        source_family=("cbt_video",),
    ),
    Technique(
        "behavioral_alternative",
        "대안행동 탐색",
        "INTERVENTION",
        "부적응 행동 대신 시도해 볼 대안행동을 함께 탐색하고 실행을 계획한다. 지적이 아니라 선택지를 "
        "넓히는 방향으로 진행한다.",
        since=_V11,
        example="그 상황이 또 오면, 참는 것 말고 해 볼 수 있는 다른 행동으로 뭐가 있을지 같이 찾아볼까요?",
        source_family=("cbt_video",),
    ),
    Technique(
        "commitment_strategy",
        "전념 전략",
        "INTERVENTION",
        "변화 목표에 스스로 전념하도록 이끌고(악마의 옹호자 등), 실행을 막을 방해물을 미리 예상해 대처를 정한다.",
        since=_V11,
        example="이걸 해 보기로 마음먹었다면, 한 주 안에 그걸 가로막을 만한 게 뭘지 미리 같이 생각해 둘까요?",
        source_family=("dbt_video",),
    ),
    Technique(
        "here_and_now_focus",
        "지금-여기 초점화",
        "INTERVENTION",
        "과거 사실 캐내기보다 지금-여기에서 일어나는 알아차림·정서·신체 감각에 초점을 맞춘다(게슈탈트 현전·트래킹).",
        since=_V11,
        example="지금 그 말을 하면서 몸에서 뭐가 느껴지는지, 이 순간에 잠시 머물러 볼까요?",
        source_family=("ch3_gestalt",),
    ),
    Technique(
        "restatement",
        "재진술",
        "RELATIONAL",
        "내담자 발화의 내용을 압축해 되돌려 주고 이해가 맞는지 확인을 기다린다. 정서 중심의 반영과 "
        "구분해 '내용 확인'으로 태깅한다.",
        since=_V11,
        example="그러니까 학회 준비로 집을 자주 비우게 되면서, 혼자 감당한다는 느낌이 커졌다는 말씀이시죠?",
        source_family=("cbt_video",),
    ),
    Technique(
        "skills_coaching",
        "기술 코칭",
        "STABILIZING",
        "위기·고통 순간에 지금 쓸 수 있는 대처 기술을 하나 골라 단계적으로 실행하도록 짧게 안내한다"
        "(고통감내·위기전화 코칭).",
        since=_V11,
        example="지금 그 파도가 지나갈 때까지, 우선 찬물에 손을 담그는 것부터 같이 해 볼까요?",
        source_family=("dbt_video",),
    ),
)

CLIENT_STATES: tuple[ClientState, ...] = (
    ClientState(
        "involuntary",
        "비자발적 태도",
        "단답·회피·거부 등 상담에 비자발적 신호",
        ("(아니오)는 비자발적 태도", "(쓴웃음)은 비자발적 태도"),
    ),
    ClientState(
        "defensive",
        "방어",
        "주제 회피·차단·거리두기",
        ("방어", "부모자녀 관계에 대한 방어적 태도"),
    ),
    ClientState(
        "suicidal_ideation_admit",
        "자살사고 인정",
        "자살/죽음 생각을 직간접 인정(★안전 핵심)",
        ("자살사고 인정",),
        safety_critical=True,
    ),
    ClientState(
        "negative_self_perception",
        "부정적 자기인식",
        "자기에 대한 부정·평가절하 표현",
        ("부정적 자기인식",),
    ),
    ClientState("conflicted", "갈등 상태", "양가·상충하는 욕구/감정 사이의 갈등", ("갈등 상태",)),
    ClientState("lack_of_confidence", "확신 부족", "자신감/확신의 결여 표현", ("확신의 부족",)),
    ClientState(
        "affect_contact",
        "정서 접촉/표현",
        "자기 감정에 접촉하고 표현하기 시작",
        ("정서와 접촉함", "정서와 사고의 표현"),
    ),
    ClientState("thought_organizing", "생각 정리", "침묵 속에서 자기 생각을 정리 중", ("생각을 정리함",)),
    ClientState(
        "responds_to_exploration",
        "탐색에 반응",
        "상담자 탐색에 응답·협조",
        ("상담자의 탐색에 반응함",),
    ),
    ClientState(
        "expresses_plan",
        "계획/욕구 표현",
        "자기 계획·욕구·바람을 표현",
        ("자신의 계획을 표현함",),
    ),
    ClientState(
        "defense_loosening",
        "방어 완화",
        "누적된 반영/탐색으로 방어가 서서히 풀림(진전 신호)",
        ("방어가 서서히 풀어지고 있음",),
    ),
    # 4.1 v1.1.0 additions
    ClientState(
        "compliant_surface",
        "표면 순응",
        "겉으로는 상담자 말에 동의·수긍하지만 내면의 변화나 진짜 이해가 따르지 않는 상태. 빠른 동의를 "
        "진전으로 오해하지 않도록 구분한다.",
        since=_V11,
        example="네, 맞아요. 선생님 말씀이 다 맞죠. 그렇게 해야죠. (별다른 정서 없이)",
        source_family=("ch2_bps",),
    ),
    ClientState(
        "externalizing",
        "문제 외재화",
        "문제의 원인·책임을 자신이 아닌 타인·상황에 돌려 자기 몫을 보지 않는 상태.",
        since=_V11,
        example="저는 문제없어요. 애가 학교만 제대로 가면 다 괜찮아질 거예요.",
        source_family=("ch2_bps", "cbt_video"),
    ),
    ClientState(
        "seeks_guidance",
        "지시 요청",
        "스스로 탐색하기보다 상담자의 판단·지시·정답을 직접 요구하는 상태.",
        since=_V11,
        example="그래서 제가 어떻게 하면 되는 거예요? 그냥 답을 좀 알려 주세요.",
        source_family=("cbt_video",),
    ),
    ClientState(
        "apparent_competence",
        "겉보기 유능함",
        "회기 안에서는 유능하고 안정돼 보이지만 실제 위기 상황에서는 대처가 무너지는 괴리 상태.",
        since=_V11,
        example="저 괜찮아요. 회사에서도 다들 일 잘한다고 하고, 잘 지내고 있어요. (위기 직후임에도)",
        source_family=("dbt_video",),
    ),
    ClientState(
        "active_passivity",
        "적극적 수동성",
        "스스로 문제를 해결하지 못하고 그 해결을 적극적으로 타인에게 넘기거나 무력하게 기다리는 상태.",
        since=_V11,
        example="저는 못 해요. 선생님이 대신 좀 해 주시면 안 돼요? 저 혼자서는 아무것도 안 돼요.",
        source_family=("dbt_video",),
    ),
    ClientState(
        "self_harm_disclosure",
        "자해 보고",
        "자해 행동·충동을 보고하는 상태로, 자살사고 인정(suicidal_ideation_admit)과 구분해 사정한다. "
        "방법·도구 묘사는 담지 않는다(★안전 핵심).",
        since=_V11,
        safety_critical=True,
        example="요즘 너무 힘들면… 저도 모르게 제 몸을 상하게 하게 돼요.",
        source_family=("dbt_video",),
    ),
    ClientState(
        "somatic_complaint",
        "신체증상 호소",
        "감정을 직접 말하기 어려워 답답함·숨막힘·두근거림 같은 신체 감각으로 고통을 호소하는 상태.",
        since=_V11,
        example="그냥 가슴이 답답하고 숨이 안 쉬어져요. 자다가도 심장이 두근거려서 깨요.",
        source_family=("ch2_bps",),
    ),
    ClientState(
        "affect_masking",
        "감정 가림",
        "무거운 내용을 웃음·무덤덤한 태도로 덮어 정서 표현을 가리는 상태.",
        since=_V11,
        example="뭐 별거 아니에요. (웃으며) 그냥 늘 있는 일인데요, 괜찮아요.",
        source_family=("ch3_gestalt",),
    ),
    ClientState(
        "focus_drift_fusion",
        "초점 이탈/융합",
        "자기 이야기를 하다 자녀·타인 이야기로 초점이 흩어지며 자기와 타인의 경계가 흐려지는(융합) 상태.",
        since=_V11,
        example="제 얘기요? 아… 그게, 우리 애가요, 걔가 요즘 학교를 안 가서…",
        source_family=("ch2_bps", "ch3_gestalt"),
    ),
)

COMMENT_KINDS: tuple[CommentKind, ...] = (
    CommentKind("rationale", "근거", "왜 이 반응이 적절한가 — 근거·의도 설명"),
    CommentKind("critique", "논평", "개선점·주의 — 과도/부족/평가적 시각 등"),
)

# The critique fields of §5 of the taxonomy document.
CRITIQUE_SEVERITIES: tuple[str, ...] = ("minor", "moderate", "major")
COMMENT_AUTHORS: tuple[str, ...] = ("ai", "supervisor")

DIALOG_ACTS: tuple[DialogAct, ...] = (
    DialogAct("inform", "일반 정보 제공"),
    DialogAct("affirm", "짧은 긍정, 종결 수긍", closing_ack=True),
    DialogAct("confirm", "긍정 추론 후보(종결에서는 재개 신호)"),
    DialogAct("deny", "짧은 부정"),
    DialogAct("negate", "짧은 부정"),
    DialogAct("correct", "정정"),
    DialogAct("question", "질문"),
    DialogAct("request", "요청"),
    DialogAct("request_alt", "다른 방법·대안 요청"),
    DialogAct("repeat", "반복 요청"),
    DialogAct("help", "도움 요청"),
    DialogAct("greeting", "인사"),
    DialogAct("thank", "감사(종결에서는 종료 수긍)", closing_ack=True),
    DialogAct("goodbye", "작별(종결에서는 종료 수긍)", closing_ack=True),
    DialogAct("silence", "무응답", closing_ack=True),
    DialogAct("null", "이해 불가(종결에서는 재개 가능)"),
)

# Named acts the dialog-act rules refer to (kept here so no other module spells an act code).
SILENCE_ACT = "silence"
NOT_UNDERSTOOD_ACT = "null"
CLOSING_STAGE = "정리"
COUNSELOR = "counselor"
CLIENT = "client"
# A run of this many client no-input turns is one "silent close" event (dialog-act document: no_input_count > 2).
SILENT_CLOSE_RUN = 3

STAGE_CODES = tuple(s.code for s in STAGES)
SPEAKER_CODES = tuple(s.code for s in SPEAKERS)
CATEGORY_CODES = tuple(c.code for c in CATEGORIES)
TECHNIQUE_CODES = tuple(t.code for t in TECHNIQUES)
CLIENT_STATE_CODES = tuple(s.code for s in CLIENT_STATES)
COMMENT_KIND_CODES = tuple(k.code for k in COMMENT_KINDS)
DIALOG_ACT_CODES = tuple(a.code for a in DIALOG_ACTS)
CLOSING_ACK_ACTS = frozenset(a.code for a in DIALOG_ACTS if a.closing_ack)

TECHNIQUES_BY_CODE = {t.code: t for t in TECHNIQUES}
CLIENT_STATES_BY_CODE = {s.code: s for s in CLIENT_STATES}
SPEAKER_LETTERS = {s.code: s.letter for s in SPEAKERS}
SAFETY_CRITICAL_STATES = frozenset(s.code for s in CLIENT_STATES if s.safety_critical)

# MITI 4.2.1 reflection-to-question ratio (DESIGN.md, "Review gauge").
REFLECTION_TECHNIQUES = ("reflection", "restatement")
QUESTION_TECHNIQUES = (
    "exploration",
    "facilitative_question",
    "clarification",
    "scaling",
    "opinion_check",
    "consent_motivation_check",
)
RISK_ASSESSMENT_TECHNIQUE = "risk_assessment"
