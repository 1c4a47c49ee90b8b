#include "tools/simulate/svg/xml_check.h"

#include <string>

#include "gtest/gtest.h"

namespace hotpage::simulate {
namespace {

TEST(XmlCheckTest, AcceptsWellFormedDocumentsAndDecodesThem) {
  auto r = CheckXml(
      "<?xml version=\"1.0\"?>\n<!-- c -->\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" a='1 &amp; 2'>"
      "<text x=\"1\">a &lt;b&gt; &#x2265;&#49; <![CDATA[<raw>]]></text><g/>"
      "</svg>\n<!-- trailing -->\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].name, "svg");
  EXPECT_EQ((*r)[0].attributes.at("a"), "1 & 2");
  EXPECT_EQ((*r)[1].name, "text");
  EXPECT_EQ((*r)[1].depth, 1);
  EXPECT_EQ((*r)[1].text,
            "a <b> \xe2\x89\xa5"
            "1 <raw>");
  EXPECT_EQ((*r)[2].name, "g");
}

TEST(XmlCheckTest, RejectsMalformedDocuments) {
  const char* bad[] = {
      "",                             // no root
      "<a>",                          // not closed
      "<a></b>",                      // mismatched
      "<a><b></a></b>",               // misnested
      "<a/><b/>",                     // two roots
      "<a x=1/>",                     // unquoted
      "<a x=\"1\" x=\"2\"/>",         // duplicate attribute
      "<a x=\"1\"y=\"2\"/>",          // no space between attributes
      "<a x=\"<\"/>",                 // '<' in a value
      "<a>&</a>",                     // bare '&'
      "<a>&nbsp;</a>",                // undefined entity
      "<a>&#0;</a>",                  // forbidden character reference
      "<a>&#x110000;</a>",            // out of range
      "<a>]]></a>",                   // ']]>' in text
      "<a>\x01</a>",                  // control character
      "<a>\xff</a>",                  // invalid UTF-8
      "<a>\xc0\xaf</a>",              // overlong
      "<a>\xef\xbf\xbe</a>",          // U+FFFE
      "<a><!-- x -- y --></a>",       // '--' in a comment
      "<!DOCTYPE a><a/>",             // DTD
      "<a/><?xml version=\"1.0\"?>",  // late declaration
      "<1a/>",                        // bad name
      "<a>text",                      // unterminated
  };
  for (const char* doc : bad) {
    EXPECT_FALSE(CheckXml(doc).ok()) << "accepted: " << doc;
  }
}

TEST(XmlCheckTest, ErrorNamesTheOffset) {
  auto r = CheckXml("<a><b></a>");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("end tag 'a' closes 'b'"),
            std::string::npos)
      << r.status();
  EXPECT_NE(std::string(r.status().message()).find("offset"),
            std::string::npos);
}

}  // namespace
}  // namespace hotpage::simulate
