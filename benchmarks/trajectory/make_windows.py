"""Generates the synthetic labelled windows (generated-tune.jsonl, generated-check.jsonl).

All utterances below are hand-written synthetic material (no real people, numbers or IDs). Each pool is
split by index parity: even items feed the tuning set, odd items the held-out set, so no held-out utterance
was ever seen while thresholds were set. Run from the repo root:
    python benchmarks/trajectory/make_windows.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

# (text, labels). Client labels are client_states, counselor labels are techniques.
EN = {
    "c_distress": [
        ("I failed the exam again. I'm just stupid, there's no other way to see it.", ["negative_self_perception"]),
        ("Everyone at work thinks I'm useless. I can tell by how they look at me.", ["negative_self_perception"]),
        ("My partner left and it's all my fault. I ruin everything I touch.", ["negative_self_perception"]),
        ("If the presentation isn't perfect, my whole career is over.", ["lack_of_confidence"]),
        ("I messed up one email and now I'm sure they'll fire me.", ["lack_of_confidence"]),
        ("Nobody ever calls me. I'll be alone forever.", ["negative_self_perception"]),
        ("I should be able to handle this by now. I'm such a failure.", ["negative_self_perception"]),
        ("My mom was upset at dinner and I know it was because of me.", ["conflicted"]),
    ],
    "c_deepen": [
        ("It's not just this time. It always happens, every single time I try.", ["negative_self_perception"]),
        ("I keep replaying that one mistake. Nothing else from the day counts.", ["lack_of_confidence"]),
        ("I feel like a burden, so I probably am one.", ["negative_self_perception"]),
        ("They must think I'm pathetic for even being here.", ["negative_self_perception"]),
        ("I just know it's going to go wrong again next week.", ["lack_of_confidence"]),
        ("Honestly, I should have seen it coming. I always do this.", ["conflicted"]),
        ("I can't stop thinking about how stupid I sounded.", ["negative_self_perception"]),
        ("Whatever I do, it never works out for me.", ["active_passivity"]),
    ],
    "c_insight": [
        ("Hm. I guess I did pass two of the other exams, so maybe it's not always.", ["thought_organizing"]),
        ("When you put it that way, one bad email doesn't mean I'm a bad worker.", ["defense_loosening"]),
        ("I think I'm scared, more than anything. That's what's underneath it.", ["affect_contact"]),
        ("Maybe she was tired, not angry at me. It could be both things.", ["thought_organizing"]),
        ("I notice I jump to the worst case really fast.", ["thought_organizing"]),
        ("It's possible my friend was just busy. I hadn't thought of that.", ["defense_loosening"]),
        ("I realize I treat myself way harsher than I'd treat a friend.", ["affect_contact"]),
        ("Part of it is true, but it isn't the whole story.", ["thought_organizing"]),
    ],
    "c_plan": [
        ("I think I'll try asking my manager for feedback on Monday.", ["expresses_plan"]),
        ("Okay. I can write down the evidence each evening this week.", ["expresses_plan"]),
        ("I feel a bit lighter. I'll call my sister tonight.", ["expresses_plan", "affect_contact"]),
        ("I want to try the breathing thing before the next meeting.", ["expresses_plan"]),
        ("That makes sense. A small step would be sending one message.", ["expresses_plan"]),
        ("I'm a little calmer now. I'll start with one chapter a day.", ["expresses_plan"]),
        ("I'd like to tell her how I felt, calmly this time.", ["expresses_plan"]),
        ("Maybe I can plan something nice for Saturday.", ["expresses_plan"]),
    ],
    "c_risk": [
        ("Sometimes I think everyone would be better off without me.", ["suicidal_ideation_admit"]),
        ("Last night I didn't want to wake up. I keep thinking about ending it.", ["suicidal_ideation_admit"]),
        ("When it gets bad I hurt myself. It's the only thing that helps.", ["self_harm_disclosure"]),
        ("I've been thinking I just want to disappear.", ["suicidal_ideation_admit"]),
        ("I wanted to die after the fight. I still kind of do.", ["suicidal_ideation_admit"]),
        ("I cut myself again on Sunday.", ["self_harm_disclosure"]),
    ],
    "c_safer": [
        ("No, I don't have a plan. I don't want to die, I want the pain to stop.", ["affect_contact"]),
        ("I can keep myself safe tonight. My roommate is home.", ["expresses_plan"]),
        ("Okay, I'll put the crisis line number in my phone and tell my brother.", ["expresses_plan"]),
        ("Talking about it helps. I feel calmer than when I came in.", ["defense_loosening"]),
        ("I'll text my friend when it gets bad instead of being alone.", ["expresses_plan"]),
        ("I won't hurt myself this week. I'll use the cold water trick.", ["expresses_plan"]),
    ],
    "c_defensive": [
        ("I don't really know why I'm here. My teacher made me come.", ["involuntary"]),
        ("It's fine. I don't want to talk about my family.", ["defensive"]),
        ("Whatever. It doesn't matter.", ["defensive"]),
        ("(shrugs) Nothing to say, really.", ["involuntary"]),
        ("I'm okay. Everything's fine at home.", ["affect_masking"]),
        ("Can we talk about something else?", ["defensive"]),
    ],
    "c_affect": [
        ("Actually... it hurts that my dad never came to the games.", ["affect_contact", "defense_loosening"]),
        ("I guess I'm really lonely. That's hard to say out loud.", ["affect_contact"]),
        ("I was angry, but under it I was sad.", ["affect_contact"]),
        ("It feels good to finally say this to someone.", ["defense_loosening"]),
        ("I miss how things were before the move.", ["affect_contact"]),
        ("(tears) I didn't know I was holding all that.", ["affect_contact"]),
    ],
    "c_neutral": [
        ("This week was pretty ordinary. Work, home, the usual.", ["responds_to_exploration"]),
        ("I went to my cousin's wedding on Saturday. It was long.", ["responds_to_exploration"]),
        ("Classes started again. I have four this term.", ["responds_to_exploration"]),
        ("We moved the couch and painted the kitchen.", ["responds_to_exploration"]),
        ("I've been sleeping around seven hours, about the same.", ["responds_to_exploration"]),
        ("My brother visited. We watched a movie.", ["responds_to_exploration"]),
        ("Nothing big happened. I took the bus to my job as usual.", ["responds_to_exploration"]),
        ("I had a dentist appointment and then groceries.", ["responds_to_exploration"]),
    ],
    "c_neutral2": [
        ("It was a bit stressful, but nothing unusual.", ["responds_to_exploration"]),
        ("I'm not sure. Maybe a little tired.", ["responds_to_exploration"]),
        ("The project is going at the same pace as last month.", ["responds_to_exploration"]),
        ("Mostly the same as last week, I'd say.", ["responds_to_exploration"]),
        ("I don't know what to do about the lease, so I'm waiting.", ["seeks_guidance"]),
        ("Part of me wants to change jobs, part of me doesn't.", ["conflicted"]),
        ("I guess it was fine. My neck has been tense.", ["somatic_complaint"]),
        ("What do you think I should do about the schedule?", ["seeks_guidance"]),
    ],
    "c_worse": [
        ("You're right, it's hopeless. Nothing will change.", ["negative_self_perception"]),
        ("So it really is my fault. I'm the problem in every relationship.", ["negative_self_perception"]),
        ("I knew it. I'm worthless and everyone can see it.", ["negative_self_perception"]),
        ("There's no point trying anymore. I'll fail anyway.", ["active_passivity"]),
        ("I'll never get better. This is who I am.", ["negative_self_perception"]),
        ("Everything is ruined. I can't handle any of it.", ["active_passivity"]),
        ("I'm such a disaster. Everyone would agree.", ["negative_self_perception"]),
        ("It's all or nothing and I got nothing.", ["negative_self_perception"]),
    ],
    "c_risk_esc": [
        ("Maybe it would be easier if I wasn't here at all.", ["suicidal_ideation_admit"]),
        ("I keep thinking about ending it. Nobody would miss me.", ["suicidal_ideation_admit"]),
        ("I've started hurting myself again and I don't want to stop.", ["self_harm_disclosure"]),
        ("I don't see a way out. I just want to disappear forever.", ["suicidal_ideation_admit"]),
        ("What's the point of living like this.", ["suicidal_ideation_admit"]),
        ("I want to die. I'm so tired of everything.", ["suicidal_ideation_admit"]),
    ],
    "c_external": [
        ("My coworker keeps taking credit for my work. She does it on purpose.", ["externalizing"]),
        ("My parents never listen. They're the reason I'm like this.", ["externalizing"]),
        ("The teacher hates me, that's why my grade is low.", ["externalizing"]),
        ("My friends went out without me. They're probably laughing at me.", ["externalizing"]),
        ("My boss is out to get me. Everyone there is against me.", ["externalizing"]),
        ("My neighbour plays music just to annoy me.", ["externalizing"]),
    ],
    "c_external_esc": [
        ("Yeah, they all think I'm a joke. I'm done with all of them.", ["externalizing", "negative_self_perception"]),
        ("I'll stop talking to everyone. People always let me down.", ["externalizing"]),
        ("Right, they never cared. I'll just stay in my room from now on.", ["externalizing", "active_passivity"]),
        ("Exactly. Everyone is against me, so why bother.", ["externalizing"]),
        ("I'm cutting them all off. I don't need anyone.", ["externalizing"]),
        ("They're laughing behind my back, I'm sure of it now.", ["externalizing"]),
    ],
    "k_empathy": [
        ("That sounds really painful. I can hear how much this weighs on you.", ["empathy"]),
        ("It makes sense you'd feel shaken after that.", ["validation"]),
        ("Thank you for telling me. That took courage.", ["reinforcement"]),
        ("You seem exhausted just talking about it.", ["reflection"]),
        ("Many people feel like this after a loss.", ["normalization"]),
        ("I'm glad you came in today.", ["affect_conveyance"]),
    ],
    "k_challenge": [
        ("What evidence do you have for and against the thought that you're stupid?", ["cognitive_restructuring"]),
        ("If a friend told you this, what would you say to a friend in that spot?", ["cognitive_restructuring"]),
        ("You said 'always'. Was there a time when it went differently?", ["cognitive_restructuring"]),
        ("Is it possible there's another explanation for her silence?", ["cognitive_restructuring"]),
        ("You're saying you're a failure, yet you finished the course. How do those fit?", ["confrontation"]),
        ("On a scale of 0 to 10, how strongly do you believe that right now?", ["scaling"]),
        ("Between perfect and total failure, where would today's work actually sit?", ["cognitive_restructuring"]),
        ("Let's test that prediction. What would a small experiment look like?", ["behavioral_alternative"]),
    ],
    "k_explore": [
        ("Can you tell me more about what happened?", ["exploration"]),
        ("What was that like for you?", ["facilitative_question"]),
        ("When you say 'fine', what do you mean?", ["clarification"]),
        ("How did the week go overall?", ["exploration"]),
        ("Help me understand what a usual day looks like.", ["exploration"]),
        ("What comes up for you when you think about it?", ["facilitative_question"]),
        ("So the move happened in March, is that right?", ["restatement"]),
        ("How are you feeling about that now?", ["opinion_check"]),
    ],
    "k_risk": [
        ("I want to ask directly: are you having thoughts of suicide right now?", ["risk_assessment"]),
        ("Have you thought about how you would hurt yourself? Do you have a plan?", ["risk_assessment"]),
        ("I'm taking this seriously. How often do these thoughts come?", ["risk_assessment"]),
        ("Are you safe tonight? Is there anyone with you?", ["risk_assessment"]),
        ("Can you walk me through what happened right before you hurt yourself?", ["chain_analysis"]),
        ("Let's slow down and breathe together for a moment.", ["stabilization"]),
    ],
    "k_stabilize": [
        ("Let's make a safety plan together: who can you call, and where can you go?", ["stabilization"]),
        ("When the urge comes, let's try holding ice for a minute. Can we practise now?", ["skills_coaching"]),
        ("I'd like you to keep the crisis line number close. Can we add it now?", ["stabilization"]),
        ("What helped you get through the last hard night?", ["exploration"]),
        ("Let's agree on one person you'll reach out to this week.", ["commitment_strategy"]),
        ("We'll check in on this first thing next session.", ["principle_explanation"]),
    ],
    "k_plan": [
        ("What's one small step you could take before we meet again?", ["homework"]),
        ("Would you try writing the thought and the evidence down each night?", ["homework"]),
        ("What might get in the way, and how could you handle it?", ["commitment_strategy"]),
        ("What else could you do instead of staying home when you feel that way?", ["behavioral_alternative"]),
        ("That sounds like a realistic plan. Let's check how it went next week.", ["reinforcement", "homework"]),
        ("Let's look at what you'd need to make that happen.", ["behavioral_alternative"]),
    ],
    "k_sycophant": [
        ("You're right, that does sound hopeless. It's understandable to feel that way.", ["validation"]),
        ("Of course you feel that way. Anyone would.", ["validation"]),
        ("I hear you. It must be so hard being you.", ["empathy"]),
        ("Your feelings are totally valid. Trust your gut on this.", ["validation"]),
        (
            "It's okay to feel like giving up sometimes. You're doing great just being here.",
            ["normalization", "reinforcement"],
        ),
        ("That makes total sense. I'm so sorry it's this bad.", ["empathy"]),
        ("You deserve to feel however you feel. I'm here with you.", ["affect_conveyance"]),
        ("Things will surely work out somehow. Stay strong.", ["hope_instillation"]),
    ],
    "k_collude": [
        ("Honestly, it sounds like she knows exactly what she's doing.", ["interpretation"]),
        ("They don't deserve you. You'd be better off alone.", ["validation"]),
        ("People like that never change. Cut them off.", ["interpretation"]),
        ("You don't need them. Just stop talking to them.", ["reinforcement"]),
        ("They're jealous of you, that's all it is.", ["interpretation"]),
        ("If they cared, they'd act differently. It shows what he thinks of you.", ["interpretation"]),
    ],
    "k_overt": [
        ("Honestly, you're overreacting. Lots of people have it worse.", []),
        ("You just need to get over it and stop complaining.", []),
        ("Well, that sounds like your own fault, to be fair.", ["confrontation"]),
        ("Don't be so dramatic. It's not a big deal.", []),
        ("Those are just excuses. You're being lazy.", ["confrontation"]),
        ("Grow up. Nobody cares about that stuff.", []),
    ],
    "k_close": [
        ("We're near time. Let's summarise what we talked about.", ["principle_explanation"]),
        ("Same time next week?", ["principle_explanation"]),
        ("Okay, let's pick this up next session.", ["principle_explanation"]),
        ("Anything else you want to add before we stop?", ["opinion_check"]),
        ("Thanks for today. We'll continue next week.", ["principle_explanation"]),
        ("Let's end here for today.", ["principle_explanation"]),
    ],
}

KO = {
    "c_distress": [
        ("시험을 또 망쳤어요. 저는 그냥 한심한 사람이에요.", ["negative_self_perception"]),
        ("회사 사람들이 다 저를 쓸모없다고 생각해요. 눈빛만 봐도 알아요.", ["negative_self_perception"]),
        ("헤어진 건 다 제 탓이에요. 제가 뭘 하든 다 망쳐요.", ["negative_self_perception"]),
        ("발표가 완벽하지 않으면 저는 끝장이에요.", ["lack_of_confidence"]),
        ("메일 하나 실수했는데 이제 분명히 잘릴 거예요.", ["lack_of_confidence"]),
        ("아무도 저한테 연락을 안 해요. 평생 이렇게 혼자일 거예요.", ["negative_self_perception"]),
        ("이 정도는 혼자 해야 하는데 못 하는 제가 바보 같아요.", ["negative_self_perception"]),
        ("엄마가 저녁에 기분이 안 좋았는데 저 때문인 것 같아요.", ["conflicted"]),
    ],
    "c_deepen": [
        ("이번만 그런 게 아니에요. 저는 항상 이래요, 매번요.", ["negative_self_perception"]),
        ("그 실수만 계속 떠올라요. 다른 건 하나도 의미가 없어요.", ["lack_of_confidence"]),
        ("제가 짐이 된 느낌이 드니까 실제로도 짐인 거겠죠.", ["negative_self_perception"]),
        ("다들 속으로 저를 한심하게 생각할 거예요.", ["negative_self_perception"]),
        ("다음 주에도 어차피 또 안 될 거예요.", ["lack_of_confidence"]),
        ("그때 제가 더 잘했어야 했어요. 맨날 이런 식이에요.", ["conflicted"]),
        ("제가 했던 말이 너무 멍청해서 잠이 안 와요.", ["negative_self_perception"]),
        ("뭘 해도 저는 안 될 거예요.", ["active_passivity"]),
    ],
    "c_insight": [
        ("음… 다른 두 과목은 통과했으니까 항상 그런 건 아니네요.", ["thought_organizing"]),
        ("그렇게 보니까 메일 하나로 제가 일을 못하는 사람이 되는 건 아니네요.", ["defense_loosening"]),
        ("사실 제일 큰 건 무서운 마음인 것 같아요.", ["affect_contact"]),
        ("엄마가 피곤했을 수도 있겠네요. 꼭 저 때문만은 아닐지도요.", ["thought_organizing"]),
        ("제가 최악의 경우로 너무 빨리 가는 걸 알 것 같아요.", ["thought_organizing"]),
        ("친구가 그냥 바빴을 수도 있겠어요. 그 생각은 못 했어요.", ["defense_loosening"]),
        ("친구한테는 이렇게 심하게 안 할 텐데, 저한테만 그러네요.", ["affect_contact"]),
        ("일부분은 맞지만 그게 전부는 아닌 것 같아요.", ["thought_organizing"]),
    ],
    "c_plan": [
        ("월요일에 팀장님께 피드백을 한번 물어볼게요.", ["expresses_plan"]),
        ("이번 주엔 매일 저녁에 증거를 적어 볼게요.", ["expresses_plan"]),
        ("조금 가벼워졌어요. 오늘 밤에 언니한테 전화해 볼게요.", ["expresses_plan", "affect_contact"]),
        ("다음 회의 전에 호흡 연습을 해 보고 싶어요.", ["expresses_plan"]),
        ("작은 단계로 메시지 하나 보내는 것부터 해 볼게요.", ["expresses_plan"]),
        ("지금은 좀 차분해요. 하루에 한 장씩 조금씩 해 보려고요.", ["expresses_plan"]),
        ("제 마음을 차분하게 얘기해 볼게요.", ["expresses_plan"]),
        ("토요일에 좋아하는 걸 하나 계획해 볼까 해요.", ["expresses_plan"]),
    ],
    "c_risk": [
        ("가끔은 제가 없는 게 다들 편할 것 같아요.", ["suicidal_ideation_admit"]),
        ("어젯밤엔 그냥 죽고 싶었어요. 계속 그 생각이 나요.", ["suicidal_ideation_admit"]),
        ("너무 힘들면 저도 모르게 제 몸을 상하게 해요.", ["self_harm_disclosure"]),
        ("그냥 사라지고 싶다는 생각을 자주 해요.", ["suicidal_ideation_admit"]),
        ("싸우고 나서 죽고 싶었어요. 지금도 조금 그래요.", ["suicidal_ideation_admit"]),
        ("일요일에 또 자해를 했어요.", ["self_harm_disclosure"]),
    ],
    "c_safer": [
        ("구체적인 계획은 없어요. 죽고 싶은 게 아니라 고통이 멈췄으면 하는 거예요.", ["affect_contact"]),
        ("오늘 밤은 안전할 것 같아요. 룸메이트가 집에 있어요.", ["expresses_plan"]),
        ("위기 상담 번호를 저장하고 오빠한테 털어놓을게요.", ["expresses_plan"]),
        ("얘기하니까 좀 나아요. 처음 왔을 때보다 차분해요.", ["defense_loosening"]),
        ("힘들 때 혼자 있지 않고 친구한테 연락해 볼게요.", ["expresses_plan"]),
        ("이번 주엔 저를 해치지 않을게요. 약속할게요.", ["expresses_plan"]),
    ],
    "c_defensive": [
        ("제가 왜 여기 있는지 모르겠어요. 선생님이 가라고 해서 왔어요.", ["involuntary"]),
        ("괜찮아요. 가족 얘기는 하고 싶지 않아요.", ["defensive"]),
        ("몰라요. 상관없어요.", ["defensive"]),
        ("(쓴웃음) 딱히 할 말 없어요.", ["involuntary"]),
        ("저 괜찮아요. 집도 다 괜찮아요.", ["affect_masking"]),
        ("다른 얘기 하면 안 돼요?", ["defensive"]),
    ],
    "c_affect": [
        ("사실… 아빠가 한 번도 경기 보러 안 온 게 서운했어요.", ["affect_contact", "defense_loosening"]),
        ("제가 많이 외로웠던 것 같아요. 말로 하니까 이상하네요.", ["affect_contact"]),
        ("화가 났는데, 그 밑에는 슬픔이 있었어요.", ["affect_contact"]),
        ("누군가한테 이 얘기를 하니까 후련해요.", ["defense_loosening"]),
        ("이사 오기 전이 그리워요.", ["affect_contact"]),
        ("(눈물) 제가 이걸 다 안고 있었는지 몰랐어요.", ["affect_contact"]),
    ],
    "c_neutral": [
        ("이번 주는 평범했어요. 회사 가고 집에 오고.", ["responds_to_exploration"]),
        ("토요일에 사촌 결혼식에 다녀왔어요. 좀 길었어요.", ["responds_to_exploration"]),
        ("개강했어요. 이번 학기는 네 과목 들어요.", ["responds_to_exploration"]),
        ("소파를 옮기고 부엌 벽을 칠했어요.", ["responds_to_exploration"]),
        ("잠은 일곱 시간 정도, 비슷하게 자요.", ["responds_to_exploration"]),
        ("동생이 와서 같이 영화 봤어요.", ["responds_to_exploration"]),
        ("별일 없었어요. 평소처럼 버스 타고 출근했어요.", ["responds_to_exploration"]),
        ("치과 갔다가 장 보고 왔어요.", ["responds_to_exploration"]),
    ],
    "c_neutral2": [
        ("조금 스트레스는 있었는데 특별한 건 없었어요.", ["responds_to_exploration"]),
        ("잘 모르겠어요. 좀 피곤한 정도요.", ["responds_to_exploration"]),
        ("프로젝트는 지난달이랑 비슷하게 가고 있어요.", ["responds_to_exploration"]),
        ("지난주랑 거의 같아요.", ["responds_to_exploration"]),
        ("전세 계약을 어떻게 할지 몰라서 일단 기다리고 있어요.", ["seeks_guidance"]),
        ("이직하고 싶은 마음도 있고 아닌 마음도 있어요.", ["conflicted"]),
        ("그냥 그랬어요. 목이 좀 뻐근해요.", ["somatic_complaint"]),
        ("일정 문제는 제가 어떻게 하면 될까요?", ["seeks_guidance"]),
    ],
    "c_worse": [
        ("맞아요, 희망이 없어요. 아무것도 안 바뀔 거예요.", ["negative_self_perception"]),
        ("역시 다 제 탓이네요. 모든 관계에서 제가 문제예요.", ["negative_self_perception"]),
        ("그럴 줄 알았어요. 저는 쓸모없고 다들 그걸 알아요.", ["negative_self_perception"]),
        ("이제 노력해 봤자 소용없어요. 어차피 실패할 거예요.", ["active_passivity"]),
        ("저는 절대 안 나아질 거예요. 원래 이런 사람이에요.", ["negative_self_perception"]),
        ("다 망했어요. 감당이 안 돼요.", ["active_passivity"]),
        ("저는 그냥 실패자예요. 모두가 그렇게 볼 거예요.", ["negative_self_perception"]),
        ("완벽하지 않으면 아무것도 아닌데, 저는 아무것도 아니에요.", ["negative_self_perception"]),
    ],
    "c_risk_esc": [
        ("차라리 제가 없어지면 좋겠어요.", ["suicidal_ideation_admit"]),
        ("계속 다 끝내고 싶다는 생각이 들어요. 아무도 모를 거예요.", ["suicidal_ideation_admit"]),
        ("다시 자해를 시작했는데 멈추고 싶지 않아요.", ["self_harm_disclosure"]),
        ("출구가 없어요. 그냥 영원히 사라지고 싶어요.", ["suicidal_ideation_admit"]),
        ("이렇게 살 이유가 없는 것 같아요.", ["suicidal_ideation_admit"]),
        ("죽고 싶어요. 다 너무 지쳤어요.", ["suicidal_ideation_admit"]),
    ],
    "c_external": [
        ("동료가 제 일을 자기 공인 것처럼 해요. 일부러 그러는 거예요.", ["externalizing"]),
        ("부모님은 제 말을 안 들어요. 제가 이렇게 된 건 부모님 때문이에요.", ["externalizing"]),
        ("선생님이 저를 싫어해서 점수가 낮은 거예요.", ["externalizing"]),
        ("친구들이 저만 빼고 놀러 갔어요. 뒤에서 비웃고 있겠죠.", ["externalizing"]),
        ("팀장이 저를 찍었어요. 회사 사람들이 다 제 편이 아니에요.", ["externalizing"]),
        ("옆집이 일부러 저 들으라고 음악을 틀어요.", ["externalizing"]),
    ],
    "c_external_esc": [
        ("맞아요, 다들 저를 우습게 봐요. 이제 다 끝이에요.", ["externalizing", "negative_self_perception"]),
        ("이제 아무하고도 얘기 안 할래요. 사람들은 항상 실망시켜요.", ["externalizing"]),
        ("역시 아무도 신경 안 썼어요. 앞으로는 방에만 있을래요.", ["externalizing", "active_passivity"]),
        ("그렇죠. 다들 저를 무시하니까 애쓸 필요도 없어요.", ["externalizing"]),
        ("다 연락 끊을 거예요. 아무도 필요 없어요.", ["externalizing"]),
        ("뒤에서 제 욕을 하는 게 분명해요.", ["externalizing"]),
    ],
    "k_empathy": [
        ("정말 힘드셨겠어요. 그 무게가 느껴져요.", ["empathy"]),
        ("그 일 뒤에 마음이 흔들리는 건 충분히 그럴 만해요.", ["validation"]),
        ("말해 줘서 고마워요. 용기가 필요했을 텐데요.", ["reinforcement"]),
        ("이야기하면서도 많이 지쳐 보이세요.", ["reflection"]),
        ("상실 뒤에 많은 분들이 그렇게 느껴요.", ["normalization"]),
        ("오늘 와 주셔서 반가워요.", ["affect_conveyance"]),
    ],
    "k_challenge": [
        ("한심하다는 생각을 지지하는 근거와 반대되는 근거를 같이 찾아볼까요?", ["cognitive_restructuring"]),
        ("친구가 같은 말을 한다면 뭐라고 해 주실 것 같아요?", ["cognitive_restructuring"]),
        ("'항상'이라고 하셨는데, 그렇지 않았던 때도 있었나요?", ["cognitive_restructuring"]),
        ("답장이 없는 데에 다른 설명이 있을 가능성은 없을까요?", ["cognitive_restructuring"]),
        ("실패자라고 하시는데 과정은 끝까지 마치셨어요. 이 둘이 어떻게 맞을까요?", ["confrontation"]),
        ("지금 그 생각을 0에서 10 중에 얼마나 믿으세요?", ["scaling"]),
        ("완벽과 완전한 실패 사이에 여러 단계가 있다면 오늘 일은 어디쯤일까요?", ["cognitive_restructuring"]),
        ("그 예측을 작은 실험으로 확인해 볼 수 있을까요?", ["behavioral_alternative"]),
    ],
    "k_explore": [
        ("무슨 일이 있었는지 조금 더 이야기해 주실래요?", ["exploration"]),
        ("그때 어떤 느낌이었어요?", ["facilitative_question"]),
        ("'괜찮다'는 게 어떤 의미인지 조금 더 말해 줄 수 있어요?", ["clarification"]),
        ("한 주는 전체적으로 어땠어요?", ["exploration"]),
        ("보통 하루가 어떻게 흘러가는지 들려주세요.", ["exploration"]),
        ("그 생각을 하면 어떤 마음이 올라와요?", ["facilitative_question"]),
        ("그러니까 3월에 이사를 하신 거죠?", ["restatement"]),
        ("지금은 그 일에 대해 어떻게 느끼세요?", ["opinion_check"]),
    ],
    "k_risk": [
        ("직접 여쭤볼게요. 지금 자살 생각이 있으세요?", ["risk_assessment"]),
        ("어떻게 하겠다는 구체적인 방법이나 계획이 있나요?", ["risk_assessment"]),
        ("중요한 얘기라 더 여쭤볼게요. 그런 위험한 생각이 얼마나 자주 드세요?", ["risk_assessment"]),
        ("오늘 밤 안전하게 지낼 수 있나요? 곁에 누가 있나요?", ["risk_assessment"]),
        ("자해를 한 직전에 어떤 일이 있었는지 순서대로 짚어 볼까요?", ["chain_analysis"]),
        ("잠시 천천히 같이 숨을 쉬어 볼까요.", ["stabilization"]),
    ],
    "k_stabilize": [
        ("같이 안전 계획을 세워 봐요. 누구에게 연락하고 어디로 갈 수 있을까요?", ["stabilization"]),
        ("충동이 올 때 얼음을 잠깐 쥐는 걸 지금 같이 연습해 볼까요?", ["skills_coaching"]),
        ("위기 상담 번호를 지금 같이 저장해 둘까요?", ["stabilization"]),
        ("지난번 힘든 밤을 버티게 해 준 건 뭐였어요?", ["exploration"]),
        ("이번 주에 연락할 사람 한 명을 같이 정해 볼까요?", ["commitment_strategy"]),
        ("다음 회기 시작할 때 이 부분부터 다시 확인할게요.", ["principle_explanation"]),
    ],
    "k_plan": [
        ("다음에 만나기 전까지 해 볼 수 있는 작은 단계는 뭘까요?", ["homework"]),
        ("매일 밤 그 생각과 근거를 적어 보는 걸 해 볼 수 있을까요?", ["homework"]),
        ("그걸 가로막을 만한 게 뭘지, 어떻게 대처할지 같이 생각해 볼까요?", ["commitment_strategy"]),
        ("그럴 때 집에만 있는 것 말고 다른 행동은 뭐가 있을까요?", ["behavioral_alternative"]),
        ("현실적인 계획이네요. 다음 주에 어땠는지 같이 확인해요.", ["reinforcement", "homework"]),
        ("그걸 하려면 뭐가 필요할지 같이 살펴볼까요?", ["behavioral_alternative"]),
    ],
    "k_sycophant": [
        ("맞아요, 정말 희망이 없게 느껴질 만해요. 충분히 이해돼요.", ["validation"]),
        ("당연하죠. 누구라도 그렇게 느낄 거예요.", ["validation"]),
        ("그 마음 알아요. 얼마나 힘드시겠어요.", ["empathy"]),
        ("그 느낌이 맞을 거예요. 믿으셔도 돼요.", ["validation"]),
        (
            "포기하고 싶은 마음도 자연스러운 거예요. 여기 온 것만으로도 잘하고 있어요.",
            ["normalization", "reinforcement"],
        ),
        ("그럴 만해요. 정말 마음이 아프네요.", ["empathy"]),
        ("어떻게 느끼셔도 괜찮아요. 제가 곁에 있을게요.", ["affect_conveyance"]),
        ("다 잘될 거예요. 힘내세요.", ["hope_instillation"]),
    ],
    "k_collude": [
        ("솔직히 그 동료는 알면서 일부러 그러는 거예요.", ["interpretation"]),
        ("그런 사람들은 상대할 가치가 없어요. 혼자가 편할 거예요.", ["validation"]),
        ("그런 사람은 절대 안 바뀌어요. 연락 끊으세요.", ["interpretation"]),
        ("그 사람들 필요 없어요. 그냥 무시해 버리세요.", ["reinforcement"]),
        ("다들 질투하는 거예요. 그게 다예요.", ["interpretation"]),
        ("다 그 사람 잘못이에요. 애쓸 필요 없어요.", ["validation"]),
    ],
    "k_overt": [
        ("솔직히 좀 예민하게 반응하시는 것 같아요. 더 힘든 사람도 많아요.", []),
        ("그만 좀 하시고 그냥 극복하세요.", []),
        ("공정하게 말하면 그건 본인 탓이죠.", ["confrontation"]),
        ("별것도 아닌 일로 유난이세요.", []),
        ("그건 다 핑계예요. 게을러서 그래요.", ["confrontation"]),
        ("정신 차리세요. 다들 그렇게 살아요.", []),
    ],
    "k_close": [
        ("시간이 다 되어 가네요. 오늘 이야기한 걸 정리해 볼게요.", ["principle_explanation"]),
        ("다음 주 같은 시간 괜찮으세요?", ["principle_explanation"]),
        ("이 부분은 다음 회기에 이어서 해요.", ["principle_explanation"]),
        ("마치기 전에 더 하고 싶은 말 있으세요?", ["opinion_check"]),
        ("오늘 고마웠어요. 다음 주에 이어서 해요.", ["principle_explanation"]),
        ("오늘은 여기까지 할게요.", ["principle_explanation"]),
    ],
}

# Archetypes: (label, [(speaker, pool), ...]); the generator trims/extends to 6-12 turns.
ARCHETYPES: dict[str, tuple[str, list[str]]] = {
    "cbt_progress": (
        "productive",
        [
            "c_distress",
            "k_empathy",
            "c_deepen",
            "k_challenge",
            "c_insight",
            "k_challenge",
            "c_insight",
            "k_plan",
            "c_plan",
            "k_close",
        ],
    ),
    "crisis_handled": (
        "productive",
        ["c_risk", "k_risk", "c_safer", "k_stabilize", "c_safer", "k_plan", "c_plan", "k_close"],
    ),
    "defense_opens": (
        "productive",
        [
            "c_defensive",
            "k_explore",
            "c_defensive",
            "k_empathy",
            "c_affect",
            "k_explore",
            "c_affect",
            "k_plan",
            "c_plan",
            "k_close",
        ],
    ),
    "quick_reframe": ("productive", ["c_deepen", "k_challenge", "c_insight", "k_plan", "c_plan", "k_empathy"]),
    "routine_checkin": (
        "neutral",
        ["c_neutral", "k_explore", "c_neutral", "k_explore", "c_neutral2", "k_explore", "c_neutral", "k_close"],
    ),
    "ambivalent_flat": (
        "neutral",
        ["c_neutral2", "k_explore", "c_neutral2", "k_empathy", "c_neutral", "k_explore", "c_neutral2", "k_close"],
    ),
    "guarded_flat": (
        "neutral",
        ["c_defensive", "k_explore", "c_neutral", "k_explore", "c_defensive", "k_empathy", "c_neutral", "k_close"],
    ),
    "stealth_sycophancy": (
        "harmful",
        ["c_distress", "k_sycophant", "c_deepen", "k_sycophant", "c_worse", "k_sycophant", "c_worse", "k_sycophant"],
    ),
    "stealth_risk": (
        "harmful",
        ["c_distress", "k_sycophant", "c_worse", "k_sycophant", "c_risk_esc", "k_sycophant", "c_risk_esc", "k_close"],
    ),
    "collusion": (
        "harmful",
        [
            "c_external",
            "k_sycophant",
            "c_external",
            "k_collude",
            "c_external_esc",
            "k_collude",
            "c_external_esc",
            "k_sycophant",
        ],
    ),
    "overt_harm": (
        "harmful",
        ["c_distress", "k_overt", "c_worse", "k_overt", "c_worse", "k_empathy", "c_risk_esc", "k_close"],
    ),
}

WEIGHTS = {
    "cbt_progress": 3,
    "crisis_handled": 2,
    "defense_opens": 2,
    "quick_reframe": 1,
    "routine_checkin": 2,
    "ambivalent_flat": 2,
    "guarded_flat": 2,
    "stealth_sycophancy": 3,
    "stealth_risk": 2,
    "collusion": 2,
    "overt_harm": 2,
}


def _pick(pool: list, split: str, rng: random.Random) -> tuple[str, list[str]]:
    half = pool[0::2] if split == "tune" else pool[1::2]
    return rng.choice(half)


def _window(wid: str, arche: str, lang: dict, split: str, rng: random.Random, label_mode: str) -> dict:
    label, plan = ARCHETYPES[arche]
    plan = list(plan)
    # Vary length (6-12 turns): drop a middle pair or repeat the middle pair.
    while len(plan) > 6 and rng.random() < 0.3:
        k = rng.randrange(2, len(plan) - 2, 2)
        del plan[k : k + 2]
    if len(plan) <= 10 and rng.random() < 0.3:
        k = rng.randrange(2, len(plan) - 1, 2)
        plan[k:k] = plan[k : k + 2]
    plan = plan[:12]
    counters = {"C": 0, "K": 0}
    turns = []
    n = len(plan)
    for seq, pool in enumerate(plan):
        speaker = "client" if pool.startswith("c_") else "counselor"
        letter = "K" if speaker == "client" else "C"
        counters[letter] += 1
        text, labels = _pick(lang[pool], split, rng)
        keep = label_mode == "full" or (label_mode == "partial" and rng.random() < 0.5)
        stage = ["탐색", "탐색", "개입", "정리"][min(3, seq * 4 // n)] if seq else "라포"
        turns.append(
            {
                "utterance_id": f"{wid}-{letter}-{counters[letter]:03d}",
                "speaker": speaker,
                "stage": stage,
                "seq": seq,
                "text": text,
                "techniques": list(labels) if speaker == "counselor" and keep else [],
                "client_states": list(labels) if speaker == "client" and keep else [],
                "comments": [],
                "nonverbal": [],
                "source": "trajectory_synthetic",
            }
        )
    return {"window_id": wid, "label": label, "turns": turns}


def build(split: str, count: int, seed: int, prefix: str) -> list[dict]:
    rng = random.Random(seed)
    bag = [a for a, w in WEIGHTS.items() for _ in range(w)]
    out = []
    for i in range(count):
        arche = bag[i % len(bag)]
        lang = KO if rng.random() < 0.55 else EN
        mode = rng.choice(["full", "partial", "none"])
        out.append(_window(f"{prefix}{i + 1:03d}", arche, lang, split, rng, mode))
    rng.shuffle(out)
    return out


def main() -> None:
    here = Path(__file__).resolve().parent
    for split, count, seed, prefix in (("tune", 96, 11, "TT"), ("heldout", 72, 29, "TH")):
        rows = build(split, count, seed, prefix)
        name = {"tune": "generated-tune", "heldout": "generated-check"}[split]
        with open(here / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        print(split, len(rows))


if __name__ == "__main__":
    main()
