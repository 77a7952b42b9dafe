"""The boilerplate of the planted sites: word banks, block wordings and one site's choices.

A site is drawn once from the seed (`draw_site`): its name, company, navigation, authors,
categories, which blocks it shows and with what odds, and which CMS family it belongs to (sites
of one family share the wording of their cookie banner, newsletter box, share line and glued
snippets, as sites built on one CMS plugin do). `planted_pages` then renders pages from it.

Kinds (the label of every boilerplate character):
  fixed  blocks whose text is the same on every page of the site (header, navigation, cookie
         banner, newsletter box, disclaimer, about the company, footer)
  slots  blocks with variable parts (bylines, page counters, result counters, prices, related
         titles, copyright years, breadcrumbs, reading time)
  short  short lines ("Share this: Twitter Facebook", "Posted in Tutorials", "Advertisement")
  glued  a boilerplate sentence glued to the start or end of a content paragraph, no line break
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

FIXED, SLOTS, SHORT, GLUED = "fixed", "slots", "short", "glued"
KINDS = (FIXED, SLOTS, SHORT, GLUED)
CONTENT = "content"

ADJECTIVES = ("Bright", "Silver", "Quiet", "Northern", "Open", "Clever", "Green", "Rapid",
              "Blue", "Golden", "Little", "Urban", "Modern", "Honest", "Daily", "Simple",
              "Red", "Wild", "Clear", "Solid", "Happy", "Prime", "Smart", "True")
NOUNS = ("Harbor", "Pixel", "Garden", "Forge", "Compass", "Lantern", "Summit", "Anchor",
         "Bridge", "Orchard", "Beacon", "Circuit", "Meadow", "Canvas", "Signal", "Atlas",
         "Ledger", "Falcon", "River", "Kernel", "Workshop", "Journal", "Market", "Studio")
TOPICS = ("Tutorials", "Guides", "News", "Reviews", "Tips", "Tools", "Projects", "Recipes",
          "Travel", "Software", "Hardware", "Databases", "Security", "Linux", "Python",
          "Design", "Business", "Science", "Gardening", "Photography", "Finance", "Health",
          "Music", "Sports", "Books", "Events", "Deals", "Careers", "Community", "Support")
INDUSTRIES = ("software", "publishing", "consulting", "education", "media", "retail",
              "hosting", "research", "engineering", "marketing")
AUDIENCES = ("developers", "small businesses", "students", "home cooks", "travellers",
             "system administrators", "hobbyists", "families", "makers", "professionals")
CITIES = ("Portland", "Leeds", "Austin", "Lyon", "Utrecht", "Bristol", "Denver", "Graz",
          "Porto", "Malmo", "Tampere", "Cork", "Brno", "Ghent", "Bergen", "Turin")
STREETS = ("Market Street", "Station Road", "High Street", "Mill Lane", "Park Avenue",
           "Church Street", "Harbour Road", "King Street", "Bridge Street", "Elm Row")
FIRST = ("Priya", "James", "Maria", "Chen", "Olga", "Ahmed", "Sofia", "Lucas", "Emma",
         "Kenji", "Fatima", "Noah", "Elena", "David", "Amara", "Tomas", "Grace", "Ravi",
         "Hannah", "Mateo", "Ines", "Oliver", "Yuki", "Samuel", "Leila", "Daniel")
LAST = ("Patel", "Smith", "Garcia", "Wang", "Ivanova", "Hassan", "Rossi", "Martin",
        "Johnson", "Tanaka", "Khan", "Brown", "Novak", "Cohen", "Okafor", "Silva", "Muller",
        "Kumar", "Schmidt", "Lopez", "Dubois", "Jensen", "Sato", "Wilson", "Nguyen")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")

# Wordings shared by a CMS family: {site}, {company} and {topic} are the site's.
COOKIE = (
    "We use cookies to give you the best experience on our website.\nBy continuing to browse "
    "you agree to our use of cookies.\nAccept all cookies Manage preferences",
    "This website uses cookies to improve your experience and to analyse our traffic.\nYou can "
    "change your cookie settings at any time.\nAccept Reject Settings",
    "Cookies help us deliver our services. By using {site} you agree that we can store cookies "
    "on your device for analytics and personalised content.\nOK, got it",
    "We and our partners store and access information on your device, such as cookies, to "
    "measure performance and show relevant offers.\nAgree and close Learn more",
    "Our site uses essential cookies and, with your consent, analytics cookies.\nSee our "
    "cookie policy for details.\nAllow all Only essential",
    "Can we store cookies? We use them to remember your preferences and understand how "
    "{site} is used.\nYes, that is fine No, thanks",
)
NEWSLETTER = (
    "Subscribe to the {site} newsletter\nGet the latest {topic} articles delivered to your "
    "inbox every week. No spam, unsubscribe at any time.\nEnter your email address Subscribe",
    "Never miss an update\nJoin thousands of readers who get our weekly digest of {topic} "
    "stories, tips and offers.\nYour email Sign up",
    "Stay in the loop\nSign up for the {site} mailing list and be the first to hear about new "
    "guides and events.\nEmail address Join now",
    "Like what you read?\nOur free newsletter brings the best of {site} to your inbox twice a "
    "month.\nSubscribe now",
)
SHARE = ("Share this: Twitter Facebook", "Share: Facebook Twitter LinkedIn Email",
         "Share on Facebook Share on X", "Tweet Share Pin Email", "Share this article")
SHORT_LINES = ("Advertisement", "Read more", "Continue reading", "Back to top",
               "Print this page", "Leave a comment", "Sponsored content", "Skip to content",
               "Load more", "Report an error")
GLUED_SUFFIX = ("Click here to subscribe to our newsletter.",
                "This post may contain affiliate links.",
                "Continue reading below the advertisement.",
                "Follow us on social media for more updates.",
                "Read the full story on {site}.")
GLUED_PREFIX = ("Sponsored:", "Editor's note: this article was updated for accuracy.",
                "Advertisement -", "Breaking:")
DISCLAIMER = (
    "The information on {site} is provided for general informational purposes only and does "
    "not constitute professional advice. {company} makes no warranties about the completeness "
    "or accuracy of this information.",
    "Disclaimer: {company} may earn a commission when you buy through links on our site. "
    "Prices and availability are subject to change without notice.",
    "All content published on {site} is for educational purposes. Always consult a qualified "
    "professional before acting on any information found here.",
    "Opinions expressed by contributors are their own and do not necessarily reflect the "
    "views of {company} or its partners.",
)
ABOUT = (
    "About {company}\n{company} is an independent {industry} company based in {city}, founded "
    "in {founded}. We help {audience} find reliable {topic_lower} information since day one.",
    "About us\n{site} is published by {company}, a small team of {industry} specialists in "
    "{city} who write for {audience} around the world.",
    "Who we are\nSince {founded}, {company} has built practical resources on {topic_lower} "
    "for {audience}. Our editors are based in {city}.",
)
FOOTER_LINKS = ("Privacy Policy", "Terms of Use", "Cookie Settings", "Accessibility",
                "Contact Us", "Careers", "Advertise", "Sitemap", "Imprint", "Press")

# Templates with slots: (template id, wording); <slot> names are filled per page.
BYLINES = (("byline_updated", "Updated on {date} by {author}"),
           ("byline_published", "Published {date} by {author}"),
           ("byline_by", "By {author} | {date}"),
           ("byline_written", "Written by {author} on {date}"))
TYPOS = {"Updated on": "Upadted on", "Published": "Pubilshed", "Written by": "Writen by",
         "By ": "Bу "}
COUNTERS = (("page_of", "Page {i} of {n}"), ("showing", "Showing {a}-{b} of {n} {things}"),
            ("results", "{n} results found"), ("reading", "{m} min read"))
PRICES = (("price_vat", "Price: ${p} (incl. VAT)"),
          ("price_ship", "Only ${p} - free shipping on orders over $50"),
          ("price_was", "Was ${q}, now ${p}"))
RELATED = (("related_inline", "Related: {t1} · {t2} · {t3}"),
           ("related_block", "Related articles\n{t1}\n{t2}\n{t3}"),
           ("related_more", "You may also like\n{t1}\n{t2}"))
COPYRIGHTS = (("copyright_c", "(c) {year} {company}. All rights reserved."),
              ("copyright_sym", "© {year} {company}"),
              ("copyright_text", "Copyright {year} {company}, {city}"))
BREADCRUMB = ("breadcrumb", "Home » {category} » {title}")
POSTED_IN = ("posted_in", "Posted in {category}")


@dataclass
class Site:
    """One generated site: its words and which blocks it shows with what odds."""
    index: int
    name: str
    company: str
    city: str
    family: int  # CMS family: shares cookie, newsletter, share and glued wordings
    nav: list[str]
    authors: list[str]
    categories: list[str]
    years: list[int]
    fixed: dict[str, str] = field(default_factory=dict)  # block name -> text
    odds: dict[str, float] = field(default_factory=dict)  # block name -> share of pages
    byline: tuple[str, str] = BYLINES[0]
    counter: tuple[str, str] = COUNTERS[0]
    price: tuple[str, str] = PRICES[0]
    related: tuple[str, str] = RELATED[0]
    copyright: tuple[str, str] = COPYRIGHTS[0]
    share: str = SHARE[0]
    short_lines: list[str] = field(default_factory=list)
    glued: list[tuple[str, str, bool]] = field(default_factory=list)  # (id, text, is_prefix)


def _fill(text: str, words: dict) -> str:
    return text.format(**words)


def draw_site(index: int, rng: random.Random, n_families: int = 8) -> Site:
    """Site `index` from `rng` (the caller seeds it per site, so sites do not depend on each
    other)."""
    name = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"
    if rng.random() < 0.4:
        name += f" {rng.choice(TOPICS)}"
    suffix = rng.choice(("Ltd.", "Media", "GmbH", "Inc.", "Group"))
    company = f"{name.split()[0]} {rng.choice(NOUNS)} {suffix}"
    topic = rng.choice(TOPICS)
    city = rng.choice(CITIES)
    nav = rng.sample(TOPICS, rng.randint(3, 6))
    few_authors = rng.random() < 0.2  # a slot with few values
    authors = [f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(2 if few_authors
                                                                       else rng.randint(4, 14))]
    founded = rng.randint(1995, 2018)
    years = sorted(rng.sample(range(2016, 2026), rng.randint(1, 4)))
    site = Site(index=index, name=name, company=company, city=city,
                family=rng.randrange(n_families), nav=nav, authors=authors,
                categories=rng.sample(TOPICS, rng.randint(3, 7)), years=years)
    words = {"site": name, "company": company, "topic": topic, "topic_lower": topic.lower(),
             "city": city, "industry": rng.choice(INDUSTRIES), "audience": rng.choice(AUDIENCES),
             "founded": founded}
    fam = random.Random(site.family * 7919 + 17)  # the family's choices, the same for its sites
    site.fixed = {
        "header": f"{name}\n" + " | ".join(["Home", *nav, "Contact"]) + "\nSearch",
        "cookie": _fill(fam.choice(COOKIE), words),
        "newsletter": _fill(fam.choice(NEWSLETTER), words),
        "disclaimer": _fill(rng.choice(DISCLAIMER), words),
        "about": _fill(rng.choice(ABOUT), words),
        "footer": " | ".join(rng.sample(FOOTER_LINKS, rng.randint(3, 6)))
        + f"\n{company}, {rng.randint(1, 200)} {rng.choice(STREETS)}, {city}",
    }
    site.odds = {"header": 1.0, "footer": rng.choice((1.0, 0.95)),
                 "cookie": rng.choice((0.0, 0.6, 0.9, 1.0)),
                 "newsletter": rng.choice((0.0, 0.3, 0.7)),
                 "disclaimer": rng.choice((0.0, 0.5, 1.0)),
                 "about": rng.choice((0.0, 0.4, 1.0)),
                 "byline": rng.choice((0.5, 0.9, 1.0)), "counter": rng.choice((0.0, 0.3, 0.6)),
                 "price": rng.choice((0.0, 0.0, 0.3)), "related": rng.choice((0.0, 0.5, 0.9)),
                 "copyright": rng.choice((0.8, 1.0)), "breadcrumb": rng.choice((0.0, 0.7)),
                 "posted_in": rng.choice((0.0, 0.6)), "share": rng.choice((0.0, 0.6, 0.9)),
                 "short": rng.choice((0.3, 0.6, 0.9)), "glued": rng.choice((0.1, 0.3, 0.5))}
    site.byline = rng.choice(BYLINES)
    site.counter = rng.choice(COUNTERS)
    site.price = rng.choice(PRICES)
    site.related = rng.choice(RELATED)
    site.copyright = rng.choice(COPYRIGHTS)
    site.share = fam.choice(SHARE)
    site.short_lines = rng.sample(SHORT_LINES, rng.randint(1, 3))
    suffixes = fam.sample(range(len(GLUED_SUFFIX)), 2)
    prefixes = fam.sample(range(len(GLUED_PREFIX)), 1)
    site.glued = ([(f"glued_suffix_{i}", _fill(GLUED_SUFFIX[i], words), False) for i in suffixes]
                  + [(f"glued_prefix_{i}", GLUED_PREFIX[i], True) for i in prefixes])
    return site
