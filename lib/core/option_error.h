// The message of a Boost.Program_options error, for the command-line front ends (apps/scalelab,
// labs/common), which link Boost.Program_options; nothing else in lib/ uses it.
//
// Boost builds the message by replacing placeholders ("%value%", "%original_token%", ...) with
// the option's name and the user's text again and again until none is left, so a token that
// itself holds a placeholder (`scalelab train --epochs %value%`) never ends. option_error_message
// swaps each '%' of those texts for a stand-in while the message is made, then puts them back:
//
//   catch (po::error& e) { usage_error(args, option_error_message(e)); }
#pragma once
#include <map>
#include <string>

#include <boost/program_options/errors.hpp>

namespace scalelab {

inline std::string option_error_message(boost::program_options::error& e) {
  auto* named = dynamic_cast<boost::program_options::error_with_option_name*>(&e);
  if (named == nullptr) return e.what();
  // The texts Boost substitutes are a protected member; a member pointer formed through a derived
  // class reaches it.
  struct Substitutions : boost::program_options::error_with_option_name {
    static std::map<std::string, std::string>& of(boost::program_options::error_with_option_name& x) {
      return x.*(&Substitutions::m_substitutions);
    }
  };
  constexpr char kStandIn = '\x1f';  // a control character: not in Boost's templates
  for (auto& [name, text] : Substitutions::of(*named)) {
    for (char& c : text) {
      if (c == '%') c = kStandIn;
    }
  }
  std::string message = named->what();
  for (char& c : message) {
    if (c == kStandIn) c = '%';
  }
  return message;
}

}  // namespace scalelab
